import { type Agent, type IncomingHttpHeaders, request } from 'node:http'
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
export async function postFrom(
  url: string,
  parts: Part[],
  localAddress = '127.0.0.1',
): Promise<EditorAnswer> {
  const { body, contentType } = multipartBody(parts)
  const res = await sendFrom(url, {
    method: 'POST',
    headers: { 'Content-Type': contentType, 'Content-Length': body.length },
    body,
    from: localAddress,
  })
  return JSON.parse(res.body.toString('utf8'))
}

export interface Sent {
  status: number
  headers: IncomingHttpHeaders
  body: Buffer
}

export interface SendInit {
  method?: string
  headers?: Record<string, string | number>
  body?: Buffer | string
  /** The loopback address to send from: each is a client with its own allowances. */
  from?: string
  /** The agent to send through (with its own keep-alive and local address); Node's global one if unset. */
  agent?: Agent
  /** The request fails when its whole answer has not come in this time. */
  timeoutMs?: number
}

/** One request to 127.0.0.1 at the port of `url`, answered whole. */
export function sendFrom(url: string, init: SendInit = {}): Promise<Sent> {
  const target = new URL(url)
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: init.method ?? 'GET',
        headers: init.headers ?? {},
        agent: init.agent,
        ...(init.from ? { localAddress: init.from } : {}),
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
          }),
        )
        res.on('error', reject)
      },
    )
    const { timeoutMs } = init
    if (timeoutMs !== undefined) {
      req.setTimeout(timeoutMs, () =>
        req.destroy(new Error(`no answer in ${timeoutMs} ms: ${url}`)),
      )
    }
    req.on('error', reject)
    req.end(init.body)
  })
}
