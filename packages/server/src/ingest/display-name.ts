const MAX_NAME_BYTES = 255
// C0/C1 controls, DEL, line/paragraph separators, bidi overrides and isolates.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching controls is the point
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g
const MARKUP = /[<>"'&`\\]/g

/**
 * The client's file name as display text only (`original`): last path segment, NFC, no
 * controls or markup characters, at most 255 UTF-8 bytes. It never reaches a storage path.
 */
export function cleanOriginalName(raw: string, fallback = 'file'): string {
  const lastSegment = raw.split(/[/\\]/).pop() ?? ''
  const cleaned = lastSegment.normalize('NFC').replace(INVISIBLE, '').replace(MARKUP, '').trim()
  return truncateUtf8(cleaned, MAX_NAME_BYTES) || fallback
}

/**
 * The lower-case dotted extension of a client name, or '' when there is none or the name is
 * one we refuse outright: control characters (NUL truncation), trailing dots or spaces,
 * dotfiles such as `.htaccess`, or a path separator.
 */
export function claimedExtension(raw: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a NUL or control byte refuses the name
  if (/[\u0000-\u001f\u007f/\\]/.test(raw)) return ''
  if (/[.\s]$/.test(raw)) return ''
  const dot = raw.lastIndexOf('.')
  if (dot <= 0) return ''
  const ext = raw.slice(dot).toLowerCase()
  const word = WORD_SUBTYPES[ext]
  if (word) return word
  return /^\.[a-z0-9]{1,10}$/.test(ext) ? ext : ''
}

/**
 * UEditor Plus's `.docx` import names each picture `blob.<subtype of its type>`: a Word picture
 * arrives as `blob.x-emf` or `blob.x-wmf`. The bytes still have to be that metafile.
 */
const WORD_SUBTYPES: Record<string, string> = { '.x-emf': '.emf', '.x-wmf': '.wmf' }

function truncateUtf8(s: string, maxBytes: number): string {
  if (Buffer.byteLength(s) <= maxBytes) return s
  let out = ''
  let bytes = 0
  for (const ch of s) {
    const n = Buffer.byteLength(ch)
    if (bytes + n > maxBytes) break
    out += ch
    bytes += n
  }
  return out
}
