import { isStandIn, lazyInstance, lazyPrototype, realObjectOf } from '../shared/lazy-web-object.js'
import { withHeaders } from './with-headers.js'

/**
 * A fetch `Request` whose method, URL, headers and signal are answered directly; the real
 * request (and its body stream) is built only when something reads more.
 */
export interface LazyRequestParts {
  method: string
  /** An already parsed and serialised absolute URL. */
  url: string
  headers: Headers
  /** Made on first read: an `AbortSignal` costs more than the rest of the request. */
  signal(): AbortSignal
  build(): Request
}

const PARTS = Symbol('parts')

interface WithParts {
  [PARTS]: LazyRequestParts
}

const prototype = lazyPrototype<WithParts>(Request.prototype, {
  method() {
    return this[PARTS].method
  },
  url() {
    return this[PARTS].url
  },
  headers() {
    return this[PARTS].headers
  },
  signal() {
    return this[PARTS].signal()
  },
})

export function lazyRequest(parts: LazyRequestParts): Request {
  return lazyInstance(prototype, { [PARTS]: parts }, parts.build)
}

/**
 * A handler's answer as its caller can use it. The Node bridge, which made the stand-in request,
 * writes stand-in answers itself; any other caller (Bun, Deno, the host app calling `ue.fetch`)
 * gets a real `Response`, since a stand-in is none to its runtime.
 */
export function answerFor(request: Request, answer: Promise<Response>): Promise<Response> {
  return isStandIn(request) ? answer : answer.then(hostAnswer)
}

/**
 * `Connection: close` on a refused upload tells the Node bridge to end the connection once it
 * has read what is left of the body. A host's own server owns its connections: Bun closes at
 * once on it, and a client still sending the body gets a broken pipe instead of the answer.
 */
function hostAnswer(answer: Response): Response {
  const real = realObjectOf(answer)
  if (!real.headers.has('connection')) return real
  return withHeaders(real, (headers) => headers.delete('connection'))
}
