import type { ServerConfig } from '../config/load.js'
import { installed } from '../shared/optional-deps.js'
import { convertsOffline, findSoffice, sofficeHasWriter } from '../shared/soffice-path.js'

/** What the Word import can take here: for the start-up banner and `doctor`. */
export interface WordSupport {
  /** The npm packages `.docx` needs that are not installed (optional dependencies). */
  missingPackages: string[]
  /** LibreOffice with Writer, which `.doc` needs; null when not found. */
  writer: string | null
  /** LibreOffice found, but without Writer. */
  sofficeWithoutWriter: string | null
  /** Writer found, but its conversions cannot be cut off from the network, and none is allowed. */
  online: boolean
}

export function wordSupport(config: Pick<ServerConfig, 'images' | 'word'>): WordSupport {
  const soffice = findSoffice(config.images.metafiles.soffice)
  const writer = soffice !== null && sofficeHasWriter(soffice) ? soffice : null
  return {
    missingPackages: ['mammoth', 'yauzl'].filter((name) => !installed(name)),
    writer,
    sofficeWithoutWriter: soffice !== null && writer === null ? soffice : null,
    online: writer !== null && !convertsOffline && !config.word.docWithNetwork,
  }
}

/** Whether `.doc` is taken as well as `.docx`. */
export function takesDoc(support: WordSupport): boolean {
  return support.missingPackages.length === 0 && support.writer !== null && !support.online
}

/** One line: which Word files the import action takes, and why not the others. */
export function wordSupportLine(support: WordSupport): string {
  if (support.missingPackages.length > 0)
    return `off: npm packages ${support.missingPackages.join(', ')} not installed`
  if (support.online)
    return `.docx only: LibreOffice at ${support.writer} cannot be cut off from the network here (not root), and it fetches linked pictures of a .doc`
  if (support.writer) return `.docx and .doc (.doc through LibreOffice Writer at ${support.writer})`
  return support.sofficeWithoutWriter
    ? `.docx only: LibreOffice at ${support.sofficeWithoutWriter} has no Writer (apt-get install libreoffice-writer-nogui)`
    : '.docx only: no LibreOffice Writer for .doc (apt-get install libreoffice-writer-nogui)'
}

/** What to do so that both `.docx` and `.doc` are taken; none when they are. */
export function wordSupportFix(support: WordSupport): string | undefined {
  if (support.missingPackages.length > 0)
    return `npm install ${support.missingPackages.join(' ')} (optional dependencies this install left out)`
  if (support.online)
    return 'run the server as root (conversions then run under unshare -n), or set word.docWithNetwork where the server has no network (docs/word.md)'
  if (!support.writer)
    return 'apt-get install libreoffice-writer-nogui, or set images.metafiles.soffice (docs/word.md)'
  return undefined
}
