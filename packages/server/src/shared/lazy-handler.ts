import type { FetchHandler } from './types.js'

/**
 * A handler made by its first request, modules loaded then, and the same one ever after: for
 * a route most servers rarely or never serve. A make that fails is tried again by the next
 * request.
 */
export function lazyHandler(make: () => Promise<FetchHandler>): FetchHandler {
  let made: Promise<FetchHandler> | undefined
  return async (request) => {
    made ??= make().catch((e: unknown) => {
      made = undefined
      throw e
    })
    return (await made)(request)
  }
}
