import { UeError } from '../shared/errors.js'
import { METAFILE_EXTS, metafileExtAgrees } from '../shared/metafile-header.js'

// file-type loads with the first file it checks, not at start.
let fileType: Promise<typeof import('file-type')> | undefined
async function fileTypeFromBuffer(head: Uint8Array) {
  fileType ??= import('file-type')
  return (await fileType).fileTypeFromBuffer(head)
}

export interface ContentType {
  /** Dotted, lower-case extension the file is stored under. */
  ext: string
  mime: string
}

/**
 * For each allowed extension, the file-type results that may stand behind it. An extension
 * not listed here and not a text type can never pass, whatever the allow-list says.
 */
const BINARY_KINDS: Record<string, readonly string[]> = {
  '.png': ['png', 'apng'],
  '.jpg': ['jpg'],
  '.jpeg': ['jpg'],
  '.gif': ['gif'],
  '.bmp': ['bmp'],
  '.webp': ['webp'],
  '.avif': ['avif'],
  '.mp4': ['mp4', 'm4v', 'mov'],
  '.m4v': ['m4v', 'mp4'],
  '.mov': ['mov', 'mp4', 'qt'],
  '.webm': ['webm'],
  '.mkv': ['mkv', 'webm'],
  '.ogv': ['ogv', 'ogg', 'ogx'],
  '.ogg': ['ogg', 'ogv', 'oga', 'opus', 'ogx'],
  '.oga': ['oga', 'ogg', 'opus'],
  '.avi': ['avi'],
  '.flv': ['flv'],
  '.wmv': ['asf', 'wmv'],
  '.mpeg': ['mpg'],
  '.mpg': ['mpg'],
  '.mp3': ['mp3'],
  '.wav': ['wav'],
  '.m4a': ['m4a', 'mp4'],
  '.aac': ['aac', 'm4a'],
  '.flac': ['flac'],
  '.pdf': ['pdf'],
  '.zip': ['zip'],
  '.rar': ['rar'],
  '.7z': ['7z'],
  '.gz': ['gz'],
  '.tar': ['tar'],
  '.doc': ['cfb'],
  '.xls': ['cfb'],
  '.ppt': ['cfb'],
  '.docx': ['docx', 'zip'],
  '.xlsx': ['xlsx', 'zip'],
  '.pptx': ['pptx', 'zip'],
}

const METAFILE_MIME: Record<string, string> = {
  '.emf': 'image/emf',
  '.wmf': 'image/wmf',
  '.emz': 'application/gzip',
  '.wmz': 'application/gzip',
}

const TEXT_TYPES: Record<string, string> = {
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
}

const MIME_FALLBACK: Record<string, string> = {
  '.doc': 'application/msword',
  '.xls': 'application/vnd.ms-excel',
  '.ppt': 'application/vnd.ms-powerpoint',
}

// WHATWG MIME sniffing's "scriptable" signatures: browsers may render such bytes as HTML.
const MARKUP_START =
  /^\s*<(!doctype html|html|head|script|iframe|h1|div|font|table|a|style|title|b|body|br|p|!--|\?xml|svg)[\s>/]/i

/**
 * Decides the stored type from the first bytes (a spool's `head`): the claimed extension must
 * be allowed and the magic bytes must agree with it; text types must be UTF-8 text that no
 * browser reads as markup.
 */
export async function decideContentType(
  head: Uint8Array,
  claimedExt: string,
  allowFiles: readonly string[],
  o: { allowActiveContent: boolean },
): Promise<ContentType> {
  if (!claimedExt || !allowFiles.includes(claimedExt)) throw new UeError('UE_TYPE_NOT_ALLOWED')
  if (METAFILE_EXTS.includes(claimedExt)) {
    // Word pictures: file-type knows none of them; their own signatures decide.
    if (!metafileExtAgrees(claimedExt, head)) throw new UeError('UE_CONTENT_MISMATCH')
    return { ext: claimedExt, mime: METAFILE_MIME[claimedExt] as string }
  }
  const sniffed = await fileTypeFromBuffer(head)
  const kinds = BINARY_KINDS[claimedExt]
  if (sniffed) {
    if (!kinds?.includes(sniffed.ext)) throw new UeError('UE_CONTENT_MISMATCH')
    return { ext: claimedExt, mime: MIME_FALLBACK[claimedExt] ?? sniffed.mime }
  }
  const textMime = TEXT_TYPES[claimedExt]
  if (textMime) {
    if (!looksLikePlainText(head, o.allowActiveContent)) throw new UeError('UE_CONTENT_MISMATCH')
    return { ext: claimedExt, mime: textMime }
  }
  if (o.allowActiveContent && !kinds) return { ext: claimedExt, mime: 'application/octet-stream' }
  throw new UeError('UE_CONTENT_MISMATCH')
}

/**
 * For bytes whose name says nothing (a captured URL): the first allowed extension whose magic
 * bytes match, or null. Only binary types qualify; text is never guessed.
 */
export async function sniffAllowedExtension(
  head: Uint8Array,
  allowFiles: readonly string[],
): Promise<string | null> {
  const sniffed = await fileTypeFromBuffer(head)
  if (!sniffed) return null
  return allowFiles.find((ext) => BINARY_KINDS[ext]?.includes(sniffed.ext)) ?? null
}

function looksLikePlainText(head: Uint8Array, allowMarkup: boolean): boolean {
  const bytes = head.subarray(0, 8192)
  if (bytes.includes(0)) return false
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true })
  } catch {
    return false
  }
  return allowMarkup || !MARKUP_START.test(text.replace(/^\ufeff/, ''))
}
