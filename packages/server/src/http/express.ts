import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FetchHandler } from '../shared/types.js'
import { isMountableServer, isMounted, type MountableServer } from './mounts.js'
import { serveNode } from './node.js'

/** The part of an Express (4 or 5) request the adapter reads. */
export interface ExpressRequestLike extends IncomingMessage {
  originalUrl?: string
  /** What the app's auth (Passport and the like) put there; handed to the `authorize` hook. */
  user?: unknown
}

export type ExpressMiddleware = (
  req: ExpressRequestLike,
  res: ServerResponse,
  next: (err?: unknown) => void,
) => void

/**
 * Express middleware for the editor backend. Mount it before any body parser; bodies stream
 * both ways, and the `authorize` hook gets `{ framework: 'express', request: req, user: req.user }`.
 *
 * - `app.use(ueditorExpress(ue))`, with the server itself: answers every path it serves at the
 *   configured routes (the editor, stored files, materials and loader files, formula images,
 *   metrics, health; `ue.mounts`) and calls `next()` for every other path.
 * - `app.use('/ueditor', ueditorExpress(ue.editor))`, with one handler: answers every request
 *   that reaches it (it never calls `next`).
 */
export function ueditorExpress(target: FetchHandler | MountableServer): ExpressMiddleware {
  const server = isMountableServer(target) ? target : undefined
  const handler = server ? server.fetch : (target as FetchHandler)
  return (req, res, next) => {
    // Express strips the mount path from `req.url`; the handlers expect the path the client used.
    const url = req.originalUrl ?? req.url ?? '/'
    if (server && !isMounted(server.mounts, url)) {
      next()
      return
    }
    void serveNode(handler, req, res, {
      url,
      host: { framework: 'express', request: req, user: req.user },
    })
  }
}
