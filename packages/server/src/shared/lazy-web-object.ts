/**
 * Stand-ins for fetch objects (`Request`, `Response`) that are built only when something needs
 * more than the few parts given up front. At the Node edge most answers read only a request's
 * method, URL and headers, and a response's status and headers; a real object costs a second
 * URL parse, `Headers` copies, an `AbortSignal` or a body web stream. A stand-in passes
 * `instanceof`; every other property and method is the real object's, built on first use.
 * It is still no real one where fetch reads the internal state (`new Request(standIn)`,
 * `fetch(standIn)` fail on every Node line), so only the server's own code is handed one:
 * code of the host app (the `authorize` hook, a handler of its own) gets the real object.
 */
const REAL = Symbol('real')
const BUILD = Symbol('build')

interface Lazy<T> {
  [REAL]: T | undefined
  [BUILD]: () => T
}

/** The real object, built now if nothing has built it yet. */
export function realOf<T>(self: T): T {
  const lazy = self as Lazy<T>
  lazy[REAL] ??= lazy[BUILD]()
  return lazy[REAL]
}

/**
 * The real object behind a stand-in, built now if nothing has built it yet; any other value as
 * it is. For code that is not ours: a stand-in is no real `Request` or `Response` to `fetch`,
 * to their constructors or to anything else that reads their internal state.
 */
export function realObjectOf<T>(value: T): T {
  return isStandIn(value) ? realOf(value) : value
}

/** Whether `value` is a stand-in (made by `lazyInstance`). */
export function isStandIn(value: unknown): boolean {
  return typeof value === 'object' && value !== null && BUILD in value
}

/** The real object if something has built it already, else undefined. */
export function builtOf<T>(self: T): T | undefined {
  return (self as Lazy<T>)[REAL]
}

/**
 * A prototype below `base` (a fetch class's prototype) that forwards every getter and method
 * to the real object, except the `direct` getters and `methods`, which the stand-in answers
 * itself.
 */
export function lazyPrototype<T extends object>(
  base: object,
  direct: Record<string, (this: T) => unknown>,
  // biome-ignore lint/suspicious/noExplicitAny: each method keeps its own parameters
  methods: Record<string, (this: T, ...args: any[]) => unknown> = {},
): object {
  const prototype: object = Object.create(base)
  for (const key of Reflect.ownKeys(base)) {
    if (key === 'constructor') continue
    const descriptor = Object.getOwnPropertyDescriptor(base, key)
    if (descriptor?.get)
      Object.defineProperty(prototype, key, {
        configurable: true,
        get(this: object) {
          return Reflect.get(realOf(this), key)
        },
      })
    else if (typeof descriptor?.value === 'function')
      Object.defineProperty(prototype, key, {
        configurable: true,
        writable: true,
        value(this: object, ...args: unknown[]) {
          const target = realOf(this)
          return (Reflect.get(target, key) as (...a: unknown[]) => unknown).apply(target, args)
        },
      })
  }
  for (const [key, get] of Object.entries(direct))
    Object.defineProperty(prototype, key, { configurable: true, get })
  for (const [key, value] of Object.entries(methods))
    Object.defineProperty(prototype, key, { configurable: true, writable: true, value })
  return prototype
}

/** A stand-in on `prototype` (from `lazyPrototype`) with its own fields; `build` makes the real one. */
export function lazyInstance<T>(prototype: object, fields: object, build: () => T): T {
  const self = Object.assign(Object.create(prototype), fields) as Lazy<T>
  self[REAL] = undefined
  self[BUILD] = build
  return self as unknown as T
}
