import type { UploadCategory } from '../db/upload-ledger.js'

/**
 * The types an unfinished upload's object in the bucket (a direct upload's pending object, a tus
 * upload's assembled one) may carry, by extension: media and documents only. No markup, SVG,
 * XML or script type is here, so a bucket that serves such objects never hands a browser
 * something it would run.
 */
const PENDING_TYPES: Readonly<Record<string, string>> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.bmp': 'image/bmp',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.mp4': 'video/mp4',
  '.m4v': 'video/mp4',
  '.mov': 'video/quicktime',
  '.webm': 'video/webm',
  '.mkv': 'video/x-matroska',
  '.ogv': 'video/ogg',
  '.avi': 'video/x-msvideo',
  '.flv': 'video/x-flv',
  '.wmv': 'video/x-ms-wmv',
  '.mpeg': 'video/mpeg',
  '.mpg': 'video/mpeg',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.m4a': 'audio/mp4',
  '.aac': 'audio/aac',
  '.flac': 'audio/flac',
  '.ogg': 'audio/ogg',
  '.oga': 'audio/ogg',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
}

export const OPAQUE_TYPE = 'application/octet-stream'

/**
 * The content type the server gives an unfinished upload's object, from its category and its
 * checked extension; the client's declared type is never used. An image, video or audio upload gets its
 * extension's type only when that is of its own kind; anything else is opaque bytes.
 */
export function pendingContentType(category: UploadCategory, ext: string): string {
  const type = PENDING_TYPES[ext]
  if (type === undefined) return OPAQUE_TYPE
  if (category === 'file' || type.startsWith(`${category}/`)) return type
  return OPAQUE_TYPE
}
