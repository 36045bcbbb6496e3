import { Readable } from 'node:stream'
import { isUeError, methodNotAllowed, UeError } from '../shared/errors.js'
import { urlOf } from '../shared/request-url.js'
import { errorResponse } from '../shared/respond.js'
import type { FetchHandler, StorageKey } from '../shared/types.js'
import type { StorageDriver } from '../storage/driver.js'

const OCTET = 'application/octet-stream'
const TEXT_PLAIN = 'text/plain; charset=utf-8'
const TEXT_CSV = 'text/csv; charset=utf-8'

/** Only types a browser cannot execute as a document or script. */
const TYPES: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  bmp: 'image/bmp',
  avif: 'image/avif',
  mp4: 'video/mp4',
  webm: 'video/webm',
  ogg: 'video/ogg',
  ogv: 'video/ogg',
  mov: 'video/quicktime',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  m4a: 'audio/mp4',
  aac: 'audio/aac',
  flac: 'audio/flac',
  oga: 'audio/ogg',
  pdf: 'application/pdf',
  txt: TEXT_PLAIN,
  md: TEXT_PLAIN,
  csv: TEXT_CSV,
  zip: 'application/zip',
  rar: 'application/vnd.rar',
  '7z': 'application/x-7z-compressed',
  gz: 'application/gzip',
  tar: 'application/x-tar',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ppt: 'application/vnd.ms-powerpoint',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
}

const KEY_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/
const MAX_KEY = 512
const TOKEN_RE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/
const ACTIVE_RE = /html|xml|svg|javascript|ecmascript|jscript/

const COMMON_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "default-src 'none'; sandbox",
  'Cross-Origin-Resource-Policy': 'cross-origin',
}

export interface FileServerOptions {
  storage: StorageDriver
  /** URL prefix the files are served under, e.g. '/uploads/'. */
  basePath: string
  /** The type recorded by the index (sniffed at upload); falls back to the extension map. */
  lookupType?: (key: StorageKey) => Promise<{ mime: string } | null>
}

/** Serves stored objects read-only (GET/HEAD) with headers that keep them inert in a browser. */
export function createFileServer(o: FileServerOptions): FetchHandler {
  const base = o.basePath.endsWith('/') ? o.basePath : `${o.basePath}/`

  return async (request) => {
    const method = request.method.toUpperCase()
    if (method !== 'GET' && method !== 'HEAD') {
      // Checked here too (not only by its route): every answer under the files path carries
      // the safety headers.
      return errorResponse(methodNotAllowed(['GET', 'HEAD']), { headers: COMMON_HEADERS })
    }

    // `pathname` already excludes the query (`?noCache=...`) and the fragment.
    const pathname = urlOf(request).pathname
    if (!pathname.startsWith(base)) return notFound()
    const key = decodeKey(pathname.slice(base.length))
    if (key === null) return notFound()

    const stat = await o.storage.stat(key)
    if (stat === null) return notFound()
    const size = stat.size

    const found = o.lookupType ? await o.lookupType(key) : null
    const type = found ? safeType(found.mime) : typeFromExtension(key)
    const headers = new Headers({
      ...COMMON_HEADERS,
      'Content-Type': type,
      'Accept-Ranges': 'bytes',
      'Cache-Control': 'public, max-age=31536000, immutable',
    })
    if (!/^(image|video|audio)\//.test(type)) {
      const name = key.slice(key.lastIndexOf('/') + 1)
      headers.set('Content-Disposition', `attachment; filename="${name}"`)
    }

    // RFC 9110 defines range handling for GET only.
    const range = method === 'GET' ? parseRange(request.headers.get('range'), size) : null
    if (range === 'unsatisfiable') {
      headers.delete('Content-Type')
      headers.delete('Content-Disposition')
      headers.set('Content-Range', `bytes */${size}`)
      headers.set('Content-Length', '0')
      headers.set('Cache-Control', 'no-store')
      return new Response(null, { status: 416, headers })
    }

    if (method === 'HEAD') {
      headers.set('Content-Length', String(size))
      return new Response(null, { status: 200, headers })
    }

    let object: Awaited<ReturnType<StorageDriver['get']>>
    try {
      object = await o.storage.get(key, range ?? undefined)
    } catch (e) {
      // Deleted between stat and get.
      if (isUeError(e) && e.code === 'UE_NOT_FOUND') return notFound()
      throw e
    }
    const body = Readable.toWeb(object.body) as ReadableStream<Uint8Array>
    if (range) {
      headers.set('Content-Range', `bytes ${range.start}-${range.end}/${object.size}`)
      headers.set('Content-Length', String(range.end - range.start + 1))
      return new Response(body, { status: 206, headers })
    }
    headers.set('Content-Length', String(object.size))
    return new Response(body, { status: 200, headers })
  }
}

/** Decodes exactly once; anything that is not a plain, canonical key is refused. */
function decodeKey(raw: string): StorageKey | null {
  if (raw.length > MAX_KEY * 3) return null
  let key: string
  try {
    key = decodeURIComponent(raw)
  } catch {
    return null
  }
  if (
    key.length > MAX_KEY ||
    key.includes('..') ||
    key.includes('\\') ||
    key.includes('\0') ||
    key.includes(';') ||
    !KEY_RE.test(key)
  ) {
    return null
  }
  return key as StorageKey
}

function typeFromExtension(key: string): string {
  const name = key.slice(key.lastIndexOf('/') + 1)
  const dot = name.lastIndexOf('.')
  if (dot <= 0) return OCTET
  return TYPES[name.slice(dot + 1).toLowerCase()] ?? OCTET
}

/** Keeps a recorded type only when a browser cannot run it as markup or script. */
function safeType(mime: string): string {
  const essence = (mime.split(';')[0] ?? '').trim().toLowerCase()
  if (!TOKEN_RE.test(essence) || ACTIVE_RE.test(essence)) return OCTET
  if (essence === 'text/plain') return TEXT_PLAIN
  if (essence === 'text/csv') return TEXT_CSV
  if (essence.startsWith('text/') || essence.startsWith('multipart/')) return OCTET
  return essence
}

/**
 * A single `bytes=` range, or 'unsatisfiable', or null to serve the whole body (no header,
 * several ranges, or a malformed one).
 */
function parseRange(
  header: string | null,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | null {
  if (header === null) return null
  const m = /^bytes=(\d*)-(\d*)$/i.exec(header.trim())
  if (!m) return null
  const [, first = '', last = ''] = m
  if (first === '' && last === '') return null
  if (first === '') {
    const suffix = Number(last)
    if (suffix === 0) return 'unsatisfiable'
    if (size === 0) return null
    return { start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(first)
  const end = last === '' ? Number.POSITIVE_INFINITY : Number(last)
  if (end < start) return null
  if (start >= size) return 'unsatisfiable'
  return { start, end: Math.min(end, size - 1) }
}

function notFound(): Response {
  return errorResponse(new UeError('UE_NOT_FOUND'), { headers: COMMON_HEADERS })
}
