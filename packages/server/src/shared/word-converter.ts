import { findSoffice, sofficeParts } from './soffice-path.js'

/** What brings both LibreOffice parts the Word features use, on Debian and Ubuntu. */
export const WORD_INSTALL = 'apt-get install -y libreoffice-draw-nogui libreoffice-writer-nogui'

export interface WordConverter {
  /** Turned off by a setting: which one. */
  off: string | null
  /** The setting `soffice` names, and the executable it was found at (or null). */
  setting: string
  soffice: string | null
  /** Draw (EMF/WMF pictures) and Writer (`.doc` import): found, missing, or null when the
   *  install's layout is not one we know, so neither can be told. */
  draw: boolean | null
  writer: boolean | null
}

/** Which of LibreOffice's parts the Word features need are installed where `soffice` is. */
export function wordConverter(images: {
  enabled: boolean
  metafiles: { enabled: boolean; soffice: string }
}): WordConverter {
  const setting = images.metafiles.soffice
  const none = { setting, soffice: null, draw: null, writer: null }
  if (!images.enabled) return { off: 'images.enabled is false', ...none }
  if (!images.metafiles.enabled) return { off: 'images.metafiles.enabled is false', ...none }
  const soffice = findSoffice(setting)
  if (soffice === null) return { off: null, ...none, draw: false, writer: false }
  const parts = sofficeParts(soffice)
  // A wrapper script or an unusual install: nothing to look at, so nothing is claimed.
  if (parts === null) return { off: null, ...none, soffice }
  return { off: null, setting, soffice, ...parts }
}

export interface WordSummary {
  /** Everything the Word features need is there (or they are off on purpose). */
  ready: boolean
  /** Whether the parts could be checked at all. */
  known: boolean
  message: string
  fix?: string
}

/** The converter in one line for `doctor` and the start-up banner, and what to install. */
export function wordSummary(w: WordConverter): WordSummary {
  if (w.off)
    return {
      ready: true,
      known: true,
      message: `off (${w.off}): Word pictures (EMF/WMF) are refused, .doc import is unavailable`,
    }
  if (w.soffice === null)
    return {
      ready: false,
      known: true,
      message: `no LibreOffice (${w.setting} not found): Word pictures (EMF/WMF) are refused, .doc import is unavailable`,
      fix: `${WORD_INSTALL} (docs/word.md), or set UEDITOR_IMAGES_SOFFICE to soffice's path`,
    }
  const at = `LibreOffice ${w.soffice}`
  if (w.draw === null || w.writer === null)
    return {
      ready: true,
      known: false,
      message: `${at}: Word pictures (EMF/WMF) are converted to PNG; whether Draw and Writer are installed cannot be told from this install`,
    }
  const missing = [
    ...(w.draw ? [] : ['libreoffice-draw-nogui']),
    ...(w.writer ? [] : ['libreoffice-writer-nogui']),
  ]
  const pictures = w.draw
    ? 'Word pictures (EMF/WMF) are converted to PNG'
    : 'Word pictures (EMF/WMF) fail to convert (no LibreOffice Draw)'
  const doc = w.writer
    ? 'Writer found for .doc import'
    : '.doc import unavailable (no LibreOffice Writer)'
  return {
    ready: missing.length === 0,
    known: true,
    message: `${at}: ${pictures}, ${doc}`,
    ...(missing.length > 0
      ? { fix: `apt-get install -y ${missing.join(' ')} (docs/word.md)` }
      : {}),
  }
}
