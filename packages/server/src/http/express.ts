import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FetchHandler } from '../shared/types.js'
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
 * Express middleware in front of one handler of `createUeditorServer`:
 * `app.use('/ueditor', ueditorExpress(ue.editor))`. It answers every request that reaches it
 * (it never calls `next`), streams bodies both ways, and hands the `authorize` hook
 * `{ framework: 'express', request: req, user: req.user }`. Mount it before any body parser.
 */
export function ueditorExpress(handler: FetchHandler): ExpressMiddleware {
  return (req, res) => {
    void serveNode(handler, req, res, {
      // Express strips the mount path from `req.url`; the handlers expect the path the client used.
      url: req.originalUrl ?? req.url,
      host: { framework: 'express', request: req, user: req.user },
    })
  }
}
