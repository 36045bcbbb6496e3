import type { IncomingMessage, ServerResponse } from 'node:http'
import { completeBodyOf } from '../shared/complete-body.js'
import { UeError } from '../shared/errors.js'
import { realOf } from '../shared/lazy-web-object.js'
import { liteEntriesOf, rawHeaders } from '../shared/lite-headers.js'
import { offerNodeBody } from '../shared/request-body.js'
import type { ConnectionInfo, HostContext } from '../shared/request-info.js'
import { rememberUrl } from '../shared/request-url.js'
import { errorParts } from '../shared/respond.js'
import type { FetchHandler } from '../shared/types.js'
import { lazyRequest } from './lazy-request.js'
import { isMountableServer, isMounted, type MountableServer } from './mounts.js'
import {
  type DrainLimits,
  drainLimitsOf,
  isServerHandler,
  NodeRequestBody,
} from './request-body-node.js'

export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void

/** What a framework adapter knows beyond the node request and response. */
export interface BridgeOptions {
  /** The request target to use instead of `req.url` (Express and Koa strip their mount path). */
  url?: string | undefined
  /** The framework's request and user, for the `authorize` hook. */
  host?: HostContext | undefined
  /** Drain limits instead of those the handler was marked with (`withDrainLimits`). */
  drain?: DrainLimits | undefined
}

/**
 * A node:http request listener for a plain node:http server or any host that hands out
 * `(req, res)`. See `serveNode` for what it guarantees.
 *
 * - `toNodeHandler(ue, rest)`, with the server itself: answers every path it serves at the
 *   configured routes (`ue.mounts`) and hands every other request to `rest` (without `rest`,
 *   it answers everything, as `ue.node` does).
 * - `toNodeHandler(ue.editor)`, with one handler (`ue.editor`, `ue.files`, `ue.materials`,
 *   `ue.fetch`): answers every request it is given.
 */
export function toNodeHandler(server: MountableServer, rest?: NodeHandler): NodeHandler
export function toNodeHandler(handler: FetchHandler): NodeHandler
export function toNodeHandler(
  target: FetchHandler | MountableServer,
  rest?: NodeHandler,
): NodeHandler {
  const server = isMountableServer(target) ? target : undefined
  const handler = server ? server.fetch : (target as FetchHandler)
  return (req, res) => {
    if (server && rest && !isMounted(server.mounts, req.url ?? '/')) {
      rest(req, res)
      return
    }
    void serveNode(handler, req, res, { host: { framework: 'node', request: req } })
  }
}

/**
 * Answers one node request with `handler`. The request body is streamed, not buffered; the
 * client address goes to the handler beside the request; the response body is written with
 * back-pressure, and a complete one (a string or a buffer) in one write with a
 * `Content-Length`; a client that goes away aborts `request.signal` and cancels the response
 * body. A body another middleware already read fails the request with `UE_BODY_CONSUMED`.
 * When the handler answers before the client has sent the whole body (a refusal), the rest is
 * read and thrown away within the drain limits before the answer is written, so the client can
 * read it instead of failing to send; past the limits the answer closes the connection.
 * Nothing a client or a handler does can make it throw or reject: it resolves once the answer
 * is written or abandoned.
 */
export async function serveNode(
  handler: FetchHandler,
  req: IncomingMessage,
  res: ServerResponse,
  options: BridgeOptions = {},
): Promise<void> {
  try {
    // Made only when something reads it: most answers never do, and a signal is costly.
    let abort: AbortController | undefined
    let gone = false
    res.once('close', () => {
      gone = !res.writableFinished
      if (gone) abort?.abort()
    })
    const clientGone = () => {
      if (!abort) {
        abort = new AbortController()
        if (gone) abort.abort()
      }
      return abort.signal
    }
    const body = new NodeRequestBody(req)
    let request: Request
    try {
      request = toRequest(req, body, options.url ?? req.url ?? '/', clientGone)
    } catch (e) {
      refuseUnbridgeable(req, res, e)
      return
    }
    // The stand-in is for the server's own handlers; any other gets a real Request.
    if (!isServerHandler(handler)) request = realOf(request)
    const info: ConnectionInfo = { remoteAddress: req.socket?.remoteAddress, host: options.host }
    let response: Response
    try {
      response = await handler(request, info)
    } catch {
      failInternal(res)
      return
    }
    if (!req.complete && !(await body.drain(options.drain ?? drainLimitsOf(handler))))
      res.setHeader('Connection', 'close')
    await writeResponse(req, res, response, clientGone)
  } catch (err) {
    // Last resort: whatever went wrong stays with this response, never with the host process.
    failInternal(res, err)
  }
}

function failInternal(res: ServerResponse, err?: unknown): void {
  try {
    if (!res.headersSent) refuse(res, new UeError('UE_INTERNAL'))
    else res.destroy(err instanceof Error ? err : undefined)
  } catch {
    res.destroy()
  }
}

/** An error answer written straight to node; whatever body follows is not read. */
function refuse(res: ServerResponse, error: UeError): void {
  const { status, headers, body } = errorParts(error, { headers: { Connection: 'close' } })
  res.writeHead(status, Object.fromEntries(headers))
  res.end(body)
}

// fetch refuses these methods outright (they are never allowed to reach an application).
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK'])

function refuseUnbridgeable(req: IncomingMessage, res: ServerResponse, cause: unknown) {
  const method = (req.method ?? '').toUpperCase()
  const notAllowed = FORBIDDEN_METHODS.has(method) || cause instanceof MethodError
  refuse(res, new UeError(notAllowed ? 'UE_METHOD_NOT_ALLOWED' : 'UE_REQUEST_INVALID'))
}

class MethodError extends Error {}

/** RFC 9110 `token`: what fetch accepts as a method name. */
const TOKEN = /^[!#$%&'*+.^`|~\w-]+$/

function toRequest(
  req: IncomingMessage,
  body: NodeRequestBody,
  target: string,
  signal: () => AbortSignal,
): Request {
  const method = req.method ?? 'GET'
  if (!TOKEN.test(method) || FORBIDDEN_METHODS.has(method.toUpperCase())) throw new MethodError()
  const url = requestUrl(req, target)
  // Read from Node's list when asked; a value fetch refuses (a raw control byte) is dropped.
  const headers = rawHeaders(req.rawHeaders)
  const hasBody = method !== 'GET' && method !== 'HEAD'
  // The body goes to one reader: the Node stream itself, or the real request's web stream.
  let taken = false
  let web: ReadableStream<Uint8Array> | undefined
  let webRead = false
  const firstWebRead = () => {
    webRead = true
    return taken ? new UeError('UE_BODY_CONSUMED') : consumedError(req)
  }
  const takeNodeBody = () => {
    // Whoever holds the real request may have read its body, or cloned it (a clone locks it).
    if (taken || webRead || web?.locked) return undefined
    const consumed = consumedError(req)
    if (consumed) throw consumed
    taken = true
    return body.take()
  }
  const request = lazyRequest({
    method,
    url: url.href,
    headers,
    signal,
    build: () => {
      web = hasBody ? body.stream(firstWebRead) : undefined
      const real = new Request(url.href, {
        method,
        headers,
        signal: signal(),
        body: web ?? null,
        duplex: 'half',
      } as RequestInit)
      // A host's handler may hand the real request on to ours: it offers the same body.
      if (hasBody) offerNodeBody(real, takeNodeBody)
      return real
    },
  })
  if (hasBody) offerNodeBody(request, takeNodeBody)
  rememberUrl(request, url)
  return request
}

/**
 * A body a parser already read (Express `express.json()` mounted first, the classic mistake)
 * cannot be had again: reading it fails with `UE_BODY_CONSUMED`, so the action refuses loudly
 * and stores nothing.
 */
function consumedError(req: IncomingMessage): UeError | undefined {
  const parsed = (req as IncomingMessage & { _body?: unknown })._body === true
  if (!parsed && !req.readableDidRead && !req.readableEnded) return undefined
  return new UeError('UE_BODY_CONSUMED', {
    detail:
      'a body parser read this request before the UEditor handler: mount the UEditor ' +
      'handler before any body parser (express.json(), koa-bodyparser, …) or keep the ' +
      'parser off its path (docs/mounting.md)',
  })
}

/**
 * The request URL, from an origin-form target (`/path?query`) or an absolute-form one (its path
 * and query only: the client never picks the origin); parsed once, as the router and the editor
 * read this very object. A `Host` that is not a valid authority
 * falls back to `localhost`, since the handlers route on the path and query; a target that is
 * not a URL throws.
 */
function requestUrl(req: IncomingMessage, target: string): URL {
  if (!target.startsWith('/')) {
    const absolute = new URL(target)
    if (absolute.protocol !== 'http:' && absolute.protocol !== 'https:')
      throw new Error('unsupported request target')
    target = `${absolute.pathname}${absolute.search}`
  }
  const host = req.headers.host
  if (host && /^[\w.:[\]-]+$/.test(host)) {
    // Concatenated, not resolved: a target such as `//other/x` stays a path on this host.
    const parsed = URL.parse(`http://${host}${target}`)
    // not an authority after all (`a:b`, `[zz]`): use the neutral host
    if (parsed) return parsed
  }
  return new URL(`http://localhost${target}`)
}

function headerRecord(response: Response): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {}
  const lite = liteEntriesOf(response.headers)
  if (lite) {
    for (const [name, value] of lite) headers[name] = value
    return headers
  }
  for (const [name, value] of response.headers) headers[name] = value
  const cookies = response.headers.getSetCookie()
  if (cookies.length > 0) headers['set-cookie'] = cookies
  return headers
}

function writeHead(
  res: ServerResponse,
  response: Response,
  headers: Record<string, string | string[]>,
) {
  if (response.statusText) res.writeHead(response.status, response.statusText, headers)
  else res.writeHead(response.status, headers)
}

/**
 * Writes the answer. A body that is complete after its first chunk (every string, JSON and
 * buffer answer) goes out in one write with a `Content-Length`; a longer one is pumped chunk by
 * chunk with back-pressure, and cancelled when the client goes away.
 */
async function writeResponse(
  req: IncomingMessage,
  res: ServerResponse,
  response: Response,
  clientSignal: () => AbortSignal,
): Promise<void> {
  const headers = headerRecord(response)
  const complete = completeBodyOf(response)
  if (complete !== undefined) {
    // Written as given: no web stream is read, and the length is known up front.
    if (!('content-length' in headers) && !('transfer-encoding' in headers))
      headers['content-length'] = String(Buffer.byteLength(complete))
    writeHead(res, response, headers)
    res.end(req.method === 'HEAD' ? undefined : complete)
    return
  }
  const body = response.body
  if (!body || req.method === 'HEAD') {
    writeHead(res, response, headers)
    res.end()
    await body?.cancel().catch(() => {})
    return
  }
  const reader = body.getReader()
  const clientGone = clientSignal()
  const cancel = () => {
    reader.cancel().catch(() => {})
  }
  clientGone.addEventListener('abort', cancel, { once: true })
  try {
    const first = await reader.read()
    const second = first.done ? first : await reader.read()
    if (second.done) {
      const bytes = first.done ? undefined : first.value
      if (!('content-length' in headers) && !('transfer-encoding' in headers))
        headers['content-length'] = String(bytes?.byteLength ?? 0)
      writeHead(res, response, headers)
      res.end(bytes)
      return
    }
    writeHead(res, response, headers)
    let next: ReadableStreamReadResult<Uint8Array> = second
    if (!first.done) res.write(first.value)
    while (!next.done) {
      if (clientGone.aborted) return
      // A body that fails while the client is not reading (the AI relay's write deadline)
      // ends the connection then, not once the client reads again.
      if (!res.write(next.value)) await Promise.race([drained(res), reader.closed])
      next = await reader.read()
    }
    res.end()
  } catch {
    // The body failed mid-way (or the client went away): the connection cannot carry a valid end.
    if (!clientGone.aborted) res.destroy()
  } finally {
    clientGone.removeEventListener('abort', cancel)
  }
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done)
      res.off('close', done)
      resolve()
    }
    res.on('drain', done)
    res.on('close', done)
  })
}
