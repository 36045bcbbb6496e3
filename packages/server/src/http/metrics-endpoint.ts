import { createHash, timingSafeEqual } from 'node:crypto'
import { UeError } from '../shared/errors.js'
import type { MetricsRegistry } from '../shared/metrics.js'
import { errorResponse } from '../shared/respond.js'
import type { FetchHandler } from '../shared/types.js'

const digest = (s: string) => createHash('sha256').update(s).digest()

/**
 * `GET /metrics` in the Prometheus text format (its route refuses other methods). With a token, a scraper must send
 * `Authorization: Bearer <token>` (compared in constant time); without one the path is open.
 */
export function createMetricsEndpoint(metrics: MetricsRegistry, token?: string): FetchHandler {
  const expected = token === undefined ? undefined : digest(token)
  return async (request) => {
    if (expected) {
      const m = /^Bearer ([^\s]+)$/.exec(request.headers.get('authorization') ?? '')
      if (!m || !timingSafeEqual(digest(m[1] as string), expected))
        return errorResponse(new UeError('UE_UNAUTHORIZED'), {
          headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' },
        })
    }
    return new Response(await metrics.render(), {
      headers: { 'Content-Type': metrics.contentType, 'Cache-Control': 'no-store' },
    })
  }
}
