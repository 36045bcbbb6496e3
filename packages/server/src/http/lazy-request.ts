import { lazyInstance, lazyPrototype } from '../shared/lazy-web-object.js'

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
