import type { ServerConfig } from '../config/load.js'
import { installed } from '../shared/optional-deps.js'
import { findSoffice, sofficeHasWriter } from '../shared/soffice-path.js'

/** What the Word import can take here: for the start-up banner and `doctor`. */
export interface WordSupport {
  /** The npm packages `.docx` needs that are not installed (optional dependencies). */
  missingPackages: string[]
  /** LibreOffice with Writer, which `.doc` needs; null when not found. */
  writer: string | null
  /** LibreOffice found, but without Writer. */
  sofficeWithoutWriter: string | null
}

export function wordSupport(config: Pick<ServerConfig, 'images'>): WordSupport {
  const soffice = findSoffice(config.images.metafiles.soffice)
  const writer = soffice !== null && sofficeHasWriter(soffice) ? soffice : null
  return {
    missingPackages: ['mammoth', 'yauzl'].filter((name) => !installed(name)),
    writer,
    sofficeWithoutWriter: soffice !== null && writer === null ? soffice : null,
  }
}

/** One line: which Word files the import action takes, and why not the others. */
export function wordSupportLine(support: WordSupport): string {
  if (support.missingPackages.length > 0)
    return `off: npm packages ${support.missingPackages.join(', ')} not installed`
  if (support.writer) return `.docx and .doc (.doc through LibreOffice Writer at ${support.writer})`
  return support.sofficeWithoutWriter
    ? `.docx only: LibreOffice at ${support.sofficeWithoutWriter} has no Writer (apt-get install libreoffice-writer-nogui)`
    : '.docx only: no LibreOffice Writer for .doc (apt-get install libreoffice-writer-nogui)'
}
