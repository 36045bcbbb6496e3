import { createReadStream } from 'node:fs'
import { realpath, stat } from 'node:fs/promises'
import { extname, join, sep } from 'node:path'
import { Readable } from 'node:stream'
import { UeError } from '../shared/errors.js'
import { errorResponse } from '../shared/respond.js'
import type { FetchHandler } from '../shared/types.js'

/** Types for what a site and the UEditor Plus distribution hold; anything else is a download. */
const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
  '.xml': 'application/xml; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.bmp': 'image/bmp',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.eot': 'application/vnd.ms-fontobject',
  '.swf': 'application/x-shockwave-flash',
  '.mp3': 'audio/mpeg',
  '.mp4': 'video/mp4',
}

export interface StaticSiteOptions {
  /** The folder served at `/`. */
  root: string
  /** File served for a folder URL. */
  index: string
  /**
   * Absolute paths never served even when inside `root` (the data folder, the upload folder,
   * the temp spool, the database), so `root: '.'` next to `./data` cannot leak uploads or the index.
   */
  exclude: readonly string[]
}

/**
 * Serves the files of one folder read-only (GET/HEAD; its route refuses other methods), for the editor's own files and the page
 * that embeds it, so the editor and this server share one origin. Refused with a 404, the same
 * as a missing file: anything that resolves outside the folder (`..`, encoded slashes,
 * symlinks that point out), dotfiles and dot-folders (`.git`, `.env`), and the excluded paths.
 */
export async function createStaticSite(o: StaticSiteOptions): Promise<FetchHandler> {
  const root = await realpath(o.root)
  if (!(await stat(root)).isDirectory()) throw new Error(`${o.root} is not a folder`)
  // Excluded paths may not exist yet (the data folder is created after this); compare both spellings.
  const excludedPaths = async () => [
    ...o.exclude,
    ...(await Promise.all(o.exclude.map((p) => realpath(p).catch(() => p)))),
  ]

  return async (request) => {
    const url = new URL(request.url)
    const segments = decodeSegments(url.pathname)
    if (segments === null) return notFound()

    let file = join(root, ...segments)
    let real: string
    let info: Awaited<ReturnType<typeof stat>>
    try {
      real = await realpath(file)
      info = await stat(real)
      if (info.isDirectory()) {
        // Relative links in an index page need the trailing slash.
        if (!url.pathname.endsWith('/'))
          return new Response(null, {
            status: 301,
            headers: { Location: `${url.pathname}/${url.search}`, 'Cache-Control': 'no-cache' },
          })
        file = join(real, o.index)
        real = await realpath(file)
        info = await stat(real)
      }
    } catch {
      return notFound()
    }
    if (!info.isFile() || !inside(real, root)) return notFound()
    for (const excluded of await excludedPaths())
      if (real === excluded || inside(real, excluded)) return notFound()

    const lastModified = info.mtime.toUTCString()
    const headers = new Headers({
      'Content-Type': TYPES[extname(real).toLowerCase()] ?? 'application/octet-stream',
      'Content-Length': String(info.size),
      'Last-Modified': lastModified,
      'Cache-Control': 'no-cache',
      'X-Content-Type-Options': 'nosniff',
    })
    const since = request.headers.get('if-modified-since')
    if (since !== null && Date.parse(since) >= Math.floor(info.mtimeMs / 1000) * 1000) {
      headers.delete('Content-Length')
      return new Response(null, { status: 304, headers })
    }
    if (request.method === 'HEAD') return new Response(null, { status: 200, headers })
    const body = Readable.toWeb(createReadStream(real)) as ReadableStream<Uint8Array>
    return new Response(body, { status: 200, headers })
  }
}

/** Path segments, decoded once; null for anything that is not a plain relative path. */
function decodeSegments(pathname: string): string[] | null {
  const out: string[] = []
  const raw = pathname.split('/').slice(1)
  for (const [i, part] of raw.entries()) {
    if (part === '' && i === raw.length - 1) break
    let s: string
    try {
      s = decodeURIComponent(part)
    } catch {
      return null
    }
    if (s === '' || s.startsWith('.') || /[/\\\0]/.test(s) || s.includes(':')) return null
    out.push(s)
  }
  return out
}

function inside(path: string, folder: string): boolean {
  return path.startsWith(folder.endsWith(sep) ? folder : `${folder}${sep}`)
}

function notFound(): Response {
  return errorResponse(new UeError('UE_NOT_FOUND'))
}
