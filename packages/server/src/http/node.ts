import type { IncomingMessage, ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import { setRequestInfo } from '../shared/request-info.js'
import type { FetchHandler } from '../shared/types.js'

export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void

/**
 * Bridges node:http to a `Request -> Response` handler. The request body is streamed, not
 * buffered; the response body is streamed with back-pressure; a client that goes away aborts
 * `request.signal`.
 */
export function toNodeHandler(handler: FetchHandler): NodeHandler {
  return (req, res) => {
    const abort = new AbortController()
    res.once('close', () => {
      if (!res.writableFinished) abort.abort()
    })
    const request = toRequest(req, abort.signal)
    setRequestInfo(request, { remoteAddress: req.socket.remoteAddress })
    handler(request)
      .then((response) => writeResponse(req, res, response))
      .catch((err: unknown) => {
        if (!res.headersSent) {
          res.writeHead(500, { 'Content-Type': 'application/json; charset=utf-8' })
          res.end('{"error":{"code":"UE_INTERNAL","message":"Internal error"}}')
        } else res.destroy(err as Error)
      })
  }
}

function toRequest(req: IncomingMessage, signal: AbortSignal): Request {
  const host =
    req.headers.host && /^[\w.:[\]-]+$/.test(req.headers.host) ? req.headers.host : 'localhost'
  const url = new URL(req.url ?? '/', `http://${host}`)
  const headers = new Headers()
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string
    if (name.startsWith(':')) continue
    try {
      headers.append(name, req.rawHeaders[i + 1] as string)
    } catch {
      // A header value fetch refuses (e.g. a raw control byte) is dropped, not fatal.
    }
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD'
  return new Request(url, {
    method: req.method,
    headers,
    signal,
    body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : null,
    // @ts-expect-error: Node's fetch needs `duplex` for streamed bodies; the DOM types lack it.
    duplex: 'half',
  })
}

async function writeResponse(req: IncomingMessage, res: ServerResponse, response: Response) {
  const headers: Record<string, string | string[]> = {}
  for (const [name, value] of response.headers) headers[name] = value
  const cookies = response.headers.getSetCookie()
  if (cookies.length > 0) headers['set-cookie'] = cookies
  if (response.statusText) res.writeHead(response.status, response.statusText, headers)
  else res.writeHead(response.status, headers)
  if (!response.body || req.method === 'HEAD') {
    res.end()
    await response.body?.cancel()
    return
  }
  const body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream)
  body.on('error', (err) => res.destroy(err))
  res.on('close', () => body.destroy())
  body.pipe(res)
}
