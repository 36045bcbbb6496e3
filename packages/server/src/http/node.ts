import type { IncomingMessage, ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { setRequestInfo } from '../shared/request-info.js'
import type { FetchHandler } from '../shared/types.js'

export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void

const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * Bridges node:http to a `Request -> Response` handler. The request body is streamed, not
 * buffered; the response body is streamed with back-pressure; a client that goes away aborts
 * `request.signal`. Nothing a client sends can make it throw: a request that cannot become a
 * fetch `Request` (a method fetch forbids, a target or `Host` that is not a URL) gets a 4xx, and
 * a failing handler a 500.
 */
export function toNodeHandler(handler: FetchHandler): NodeHandler {
  return (req, res) => {
    const abort = new AbortController()
    res.once('close', () => {
      if (!res.writableFinished) abort.abort()
    })
    let request: Request
    try {
      request = toRequest(req, abort.signal)
    } catch (e) {
      refuseUnbridgeable(req, res, e)
      return
    }
    setRequestInfo(request, { remoteAddress: req.socket.remoteAddress })
    Promise.resolve()
      .then(() => handler(request))
      .then((response) => writeResponse(req, res, response))
      .catch((err: unknown) => {
        if (!res.headersSent) {
          res.writeHead(500, { 'Content-Type': JSON_TYPE, Connection: 'close' })
          res.end('{"error":{"code":"UE_INTERNAL","message":"Internal error"}}')
        } else res.destroy(err as Error)
      })
  }
}

// fetch refuses these methods outright (they are never allowed to reach an application).
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK'])

function refuseUnbridgeable(req: IncomingMessage, res: ServerResponse, cause: unknown) {
  const method = (req.method ?? '').toUpperCase()
  const notAllowed = FORBIDDEN_METHODS.has(method) || cause instanceof MethodError
  const [status, code, message] = notAllowed
    ? [405, 'UE_METHOD_NOT_ALLOWED', 'Method not allowed']
    : [400, 'UE_REQUEST_INVALID', 'The request is malformed']
  // Whatever body follows is not read: the connection ends with the answer.
  res.writeHead(status, { 'Content-Type': JSON_TYPE, Connection: 'close' })
  res.end(JSON.stringify({ error: { code, message } }))
}

class MethodError extends Error {}

/** RFC 9110 `token`: what fetch accepts as a method name. */
const TOKEN = /^[!#$%&'*+.^`|~\w-]+$/

function toRequest(req: IncomingMessage, signal: AbortSignal): Request {
  const method = req.method ?? 'GET'
  if (!TOKEN.test(method) || FORBIDDEN_METHODS.has(method.toUpperCase())) throw new MethodError()
  const url = requestUrl(req)
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
  const hasBody = method !== 'GET' && method !== 'HEAD'
  return new Request(url, {
    method,
    headers,
    signal,
    body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : null,
    // @ts-expect-error: Node's fetch needs `duplex` for streamed bodies; the DOM types lack it.
    duplex: 'half',
  })
}

/**
 * The request URL, from an origin-form target (`/path?query`) or an absolute-form one (its path
 * and query only: the client never picks the origin). A `Host` that is not a valid authority
 * falls back to `localhost`, since the handlers route on the path and query; a target that is
 * not a URL throws.
 */
function requestUrl(req: IncomingMessage): URL {
  let target = req.url ?? '/'
  if (!target.startsWith('/')) {
    const absolute = new URL(target)
    if (absolute.protocol !== 'http:' && absolute.protocol !== 'https:')
      throw new Error('unsupported request target')
    target = `${absolute.pathname}${absolute.search}`
  }
  const host = req.headers.host
  if (host && /^[\w.:[\]-]+$/.test(host)) {
    try {
      return new URL(target, `http://${host}`)
    } catch {
      // not an authority after all (`a:b`, `[zz]`): use the neutral host
    }
  }
  return new URL(target, 'http://localhost')
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
  // A client that goes away mid-body ends the pipeline with an error that is nobody's fault.
  await pipeline(body, res).catch(() => res.destroy())
}
