import { createHash, randomBytes } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { request } from 'node:http'
import { pipeline } from 'node:stream/promises'
import { MP4 } from './fixtures.js'

/** The `Upload-Metadata` header of these pairs. */
export function tusMetadata(pairs: Record<string, string>): string {
  return Object.entries(pairs)
    .map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`)
    .join(',')
}

export interface TusAnswer {
  status: number
  headers: Headers
  text: string
  json(): {
    state?: string
    code?: string
    url?: string
    size?: number
    error?: { code: string; message: string }
  }
}

/** One tus request with `fetch` (`Tus-Resumable` added). */
export async function tusFetch(
  url: string,
  init: { method: string; headers?: Record<string, string>; body?: Buffer },
): Promise<TusAnswer> {
  const res = await fetch(url, {
    method: init.method,
    headers: { 'Tus-Resumable': '1.0.0', ...init.headers },
    ...(init.body ? { body: new Uint8Array(init.body) } : {}),
  })
  const text = await res.text()
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) }
}

/**
 * A video file of `size` bytes written a megabyte at a time (never whole in memory): an MP4
 * header, then random bytes. Answers its SHA-256.
 */
export async function writeVideo(path: string, size: number): Promise<string> {
  const hash = createHash('sha256')
  async function* chunks() {
    let left = size
    let first = true
    while (left > 0) {
      const n = Math.min(left, 1024 * 1024)
      const chunk = randomBytes(n)
      if (first) MP4.copy(chunk)
      first = false
      hash.update(chunk)
      left -= n
      yield chunk
    }
  }
  await pipeline(chunks(), createWriteStream(path))
  return hash.digest('hex')
}

/** The SHA-256 of a readable, streamed. */
export async function sha256Of(stream: AsyncIterable<Buffer>): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of stream) hash.update(chunk)
  return hash.digest('hex')
}

/**
 * A PATCH of the file at `path` from `offset`, streamed, that the client breaks off (destroys
 * the socket) once `breakAfter` bytes are written. Resolves when the connection is gone.
 */
export function patchBrokenOff(
  url: string,
  o: {
    path: string
    offset: number
    size: number
    breakAfter: number
    headers: Record<string, string>
  },
): Promise<void> {
  const target = new URL(url)
  return new Promise((resolve) => {
    const req = request({
      host: target.hostname,
      port: target.port,
      path: target.pathname,
      method: 'PATCH',
      headers: {
        ...o.headers,
        'Tus-Resumable': '1.0.0',
        'Upload-Offset': String(o.offset),
        'Content-Type': 'application/offset+octet-stream',
        'Content-Length': String(o.size - o.offset),
      },
    })
    req.on('error', () => resolve())
    req.on('close', () => resolve())
    req.on('response', (res) => res.resume())
    let sent = 0
    const file = createReadStream(o.path, { start: o.offset, highWaterMark: 256 * 1024 })
    file.on('data', (chunk) => {
      sent += chunk.length
      if (!req.write(chunk)) {
        file.pause()
        req.once('drain', () => file.resume())
      }
      if (sent >= o.breakAfter) {
        file.destroy()
        req.destroy()
      }
    })
  })
}

/** A PATCH of the rest of the file from `offset`, streamed; answers the final answer. */
export function patchRest(
  url: string,
  o: { path: string; offset: number; size: number; headers: Record<string, string> },
): Promise<TusAnswer> {
  const target = new URL(url)
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'PATCH',
        headers: {
          ...o.headers,
          'Tus-Resumable': '1.0.0',
          'Upload-Offset': String(o.offset),
          'Content-Type': 'application/offset+octet-stream',
          'Content-Length': String(o.size - o.offset),
        },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          const headers = new Headers()
          for (const [k, v] of Object.entries(res.headers))
            if (typeof v === 'string') headers.set(k, v)
          resolve({ status: res.statusCode ?? 0, headers, text, json: () => JSON.parse(text) })
        })
      },
    )
    req.on('error', reject)
    pipeline(createReadStream(o.path, { start: o.offset }), req).catch(reject)
  })
}
