import { createHash, timingSafeEqual } from 'node:crypto'
import type { MetricsRegistry } from '../shared/metrics.js'
import type { FetchHandler } from '../shared/types.js'

const digest = (s: string) => createHash('sha256').update(s).digest()

/**
 * `GET /metrics` in the Prometheus text format. With a token, a scraper must send
 * `Authorization: Bearer <token>` (compared in constant time); without one the path is open.
 */
export function createMetricsEndpoint(metrics: MetricsRegistry, token?: string): FetchHandler {
  const expected = token === undefined ? undefined : digest(token)
  return async (request) => {
    if (request.method !== 'GET' && request.method !== 'HEAD')
      return plain(405, 'Method not allowed\n', { Allow: 'GET, HEAD' })
    if (expected) {
      const m = /^Bearer ([^\s]+)$/.exec(request.headers.get('authorization') ?? '')
      if (!m || !timingSafeEqual(digest(m[1] as string), expected))
        return plain(401, 'Unauthorized\n', { 'WWW-Authenticate': 'Bearer realm="metrics"' })
    }
    return new Response(await metrics.render(), {
      headers: { 'Content-Type': metrics.contentType, 'Cache-Control': 'no-store' },
    })
  }
}

function plain(status: number, text: string, headers: Record<string, string>): Response {
  return new Response(text, {
    status,
    headers: {
      'Content-Type': 'text/plain; charset=utf-8',
      'Cache-Control': 'no-store',
      ...headers,
    },
  })
}
