import { request } from 'node:http'
import { multipartBody, type Part } from './multipart.js'
import type { TestServer } from './start-server.js'

export interface EditorAnswer {
  state: string
  code?: string
  url?: string
  size?: number
}

/**
 * A multipart upload sent from another loopback address (the whole of 127/8 is local on Linux),
 * so the server sees a different client.
 */
export function uploadFrom(
  srv: TestServer,
  localAddress: string,
  parts: Part[],
  action = 'image',
): Promise<EditorAnswer> {
  return postFrom(srv.action(action), parts, localAddress)
}

/** A multipart POST of `parts` to `url` from a chosen loopback address; the answer as JSON. */
export function postFrom(
  url: string,
  parts: Part[],
  localAddress = '127.0.0.1',
): Promise<EditorAnswer> {
  const { body, contentType } = multipartBody(parts)
  const target = new URL(url)
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: 'POST',
        localAddress,
        headers: { 'Content-Type': contentType, 'Content-Length': body.length },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c) => chunks.push(c))
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}
