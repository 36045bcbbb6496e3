import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FetchHandler } from '../shared/types.js'
import { isMountableServer, isMounted, type MountableServer } from './mounts.js'
import { serveNode } from './node.js'

/** The part of a Koa (2 or 3) context the adapter reads. */
export interface KoaContextLike {
  req: IncomingMessage
  res: ServerResponse
  path: string
  originalUrl: string
  respond?: boolean
  // biome-ignore lint/suspicious/noExplicitAny: Koa's own state type is `any`.
  state: any
}

export type KoaMiddleware = (ctx: KoaContextLike, next: () => Promise<unknown>) => Promise<void>

export interface KoaOptions {
  /**
   * Answer only this path and what lies under it (`/ueditor`, `/ueditor/…`), passing every other
   * request on; without it, every request that reaches the middleware is answered (inside a
   * router route, for example).
   */
  path?: string
}

/**
 * Koa middleware for the editor backend. Mount it before any body parser. The answer is written
 * straight to the node response (`ctx.respond = false`), bodies stream both ways, and the
 * `authorize` hook gets `{ framework: 'koa', request: ctx, user: ctx.state.user }`.
 *
 * - `app.use(ueditorKoa(ue))`, with the server itself: answers every path it serves at the
 *   configured routes (`ue.mounts`) and passes every other request on.
 * - `app.use(ueditorKoa(ue.editor, { path: '/ueditor' }))`, with one handler: see `KoaOptions`.
 */
export function ueditorKoa(server: MountableServer): KoaMiddleware
export function ueditorKoa(handler: FetchHandler, options?: KoaOptions): KoaMiddleware
export function ueditorKoa(
  target: FetchHandler | MountableServer,
  options: KoaOptions = {},
): KoaMiddleware {
  const server = isMountableServer(target) ? target : undefined
  const handler = server ? server.fetch : (target as FetchHandler)
  const path = options.path?.replace(/\/+$/, '')
  const ours = (ctx: KoaContextLike) => {
    if (server) return isMounted(server.mounts, ctx.originalUrl)
    return path === undefined || ctx.path === path || ctx.path.startsWith(`${path}/`)
  }
  return async (ctx, next) => {
    if (!ours(ctx)) {
      await next()
      return
    }
    ctx.respond = false
    await serveNode(handler, ctx.req, ctx.res, {
      url: ctx.originalUrl,
      host: { framework: 'koa', request: ctx, user: ctx.state?.user },
    })
  }
}
