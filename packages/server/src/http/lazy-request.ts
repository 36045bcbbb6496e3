/**
 * A fetch `Request` that is built only when something needs more than its method, URL and
 * headers. Most answers (config, listings, errors, files) read only those three, and a real
 * `Request` costs a second URL parse, a `Headers` copy and an `AbortSignal` that follows the
 * client's (the costliest part). The object passes `instanceof Request`; every other property
 * and method is the real request's, built on first use from `build`.
 */
export interface LazyRequestParts {
  method: string
  /** An already parsed and serialised absolute URL. */
  url: string
  headers: Headers
  build(): Request
}

const PARTS = Symbol('parts')
const REAL = Symbol('real')

interface LazyRequest {
  [PARTS]: LazyRequestParts
  [REAL]: Request | undefined
}

function real(self: LazyRequest): Request {
  self[REAL] ??= self[PARTS].build()
  return self[REAL]
}

const prototype: object = Object.create(Request.prototype)
for (const key of Reflect.ownKeys(Request.prototype)) {
  if (key === 'constructor') continue
  const descriptor = Object.getOwnPropertyDescriptor(Request.prototype, key)
  if (descriptor?.get)
    Object.defineProperty(prototype, key, {
      configurable: true,
      get(this: LazyRequest) {
        return Reflect.get(real(this), key)
      },
    })
  else if (typeof descriptor?.value === 'function')
    Object.defineProperty(prototype, key, {
      configurable: true,
      writable: true,
      value(this: LazyRequest, ...args: unknown[]) {
        const target = real(this)
        return (Reflect.get(target, key) as (...a: unknown[]) => unknown).apply(target, args)
      },
    })
}
Object.defineProperties(prototype, {
  method: {
    get(this: LazyRequest) {
      return this[PARTS].method
    },
  },
  url: {
    get(this: LazyRequest) {
      return this[PARTS].url
    },
  },
  headers: {
    get(this: LazyRequest) {
      return this[PARTS].headers
    },
  },
})

export function lazyRequest(parts: LazyRequestParts): Request {
  const self = Object.create(prototype) as LazyRequest
  self[PARTS] = parts
  self[REAL] = undefined
  return self as unknown as Request
}
