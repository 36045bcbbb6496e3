import { isStandIn, lazyInstance, lazyPrototype, realObjectOf } from '../shared/lazy-web-object.js'

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
 * writes stand-in answers itself; any other caller (Bun, Deno, a worker, the host app calling
 * `ue.fetch`) gets a real `Response`, since a stand-in is none to its runtime.
 */
export function answerFor(request: Request, answer: Promise<Response>): Promise<Response> {
  return isStandIn(request) ? answer : answer.then(realObjectOf)
}
