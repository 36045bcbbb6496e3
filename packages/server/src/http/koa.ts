import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FetchHandler } from '../shared/types.js'
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
 * Koa middleware in front of one handler of `createUeditorServer`:
 * `app.use(ueditorKoa(ue.editor, { path: '/ueditor' }))`. The answer is written straight to
 * the node response (`ctx.respond = false`), bodies stream both ways, and the `authorize` hook
 * gets `{ framework: 'koa', request: ctx, user: ctx.state.user }`. Mount it before any body
 * parser.
 */
export function ueditorKoa(handler: FetchHandler, options: KoaOptions = {}): KoaMiddleware {
  const path = options.path?.replace(/\/+$/, '')
  return async (ctx, next) => {
    if (path !== undefined && ctx.path !== path && !ctx.path.startsWith(`${path}/`)) {
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
