import type { FetchHandler } from './types.js'

/**
 * What `make` makes, made by the first call and the same ever after; a make that fails is tried
 * again by the next call.
 */
export function lazyOnce<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined
  return () => {
    made ??= make().catch((e: unknown) => {
      made = undefined
      throw e
    })
    return made
  }
}

/**
 * A handler made by its first request, modules loaded then, and the same one ever after: for
 * a route most servers rarely or never serve, or whose modules can wait for its first request.
 */
export function lazyHandler(make: () => Promise<FetchHandler>): FetchHandler {
  const handler = lazyOnce(make)
  return async (request) => (await handler())(request)
}
