import type { Metrics } from '../shared/metrics.js'
import { bindRequestContext, requestContext, requestIdFrom } from '../shared/request-context.js'
import { requestInfo } from '../shared/request-info.js'
import { loggedPath, urlOf } from '../shared/request-url.js'
import type { FetchHandler, Logger } from '../shared/types.js'
import { withHeaders } from './with-headers.js'

export interface ObserveOptions {
  log: Logger
  metrics: Metrics
  /** A fixed name for the part of the server a path belongs to (a metric label). */
  routeOf(pathname: string): string
  /** Routes whose access lines are logged at debug level (health checks, scrapes). */
  quietRoutes?: ReadonlySet<string>
}

/**
 * Gives each request an id (the caller's `X-Request-Id` when sane, else a new one) that every
 * log line written for it carries (`requestLogger`) and that the answer returns; logs one access
 * line (the client address, the path without its query, which may hold tokens) and counts the
 * request. A request that
 * is already being observed (a handler mounted inside another) passes straight through.
 */
export function observe(handler: FetchHandler, o: ObserveOptions): FetchHandler {
  return async (request) => {
    if (requestContext(request)) return handler(request)
    const requestId = requestIdFrom(request.headers.get('x-request-id'))
    bindRequestContext(request, { requestId })
    const started = process.hrtime.bigint()
    const { pathname } = urlOf(request)
    const route = o.routeOf(pathname)
    let status = 500
    try {
      const response = withHeaders(await handler(request), (headers) =>
        headers.set('X-Request-Id', requestId),
      )
      status = response.status
      return response
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9
      o.metrics.httpRequest(route, request.method, status, seconds)
      const line = {
        reqId: requestId,
        // The client after the http.trustProxy rules: behind nginx, the visitor, not nginx.
        client: requestInfo(request)?.remoteAddress,
        method: request.method,
        path: loggedPath(pathname),
        route,
        status,
        ms: Math.round(seconds * 1000),
      }
      if (o.quietRoutes?.has(route)) o.log.debug(line, 'request')
      else o.log.info(line, 'request')
    }
  }
}
