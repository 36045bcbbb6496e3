import type { FetchHandler } from '../shared/types.js'
import { withHeaders } from './with-headers.js'

/** The headers UEditor Plus sends, including the underscore form its video dialog uses. */
const ALLOWED_HEADERS = 'Authorization, Content-Type, X-Requested-With, X_Requested_With'

/**
 * Exact-origin CORS: allowed origins get `Access-Control-Allow-Origin` echoed (never `*`,
 * never credentials); preflights are answered here and never reach the handler.
 */
export function withCors(
  handler: FetchHandler,
  origins: readonly string[],
  methods = 'GET, POST, OPTIONS',
  /** More request headers to allow, e.g. the configured auth header (`X-Token`). */
  extraHeaders: readonly string[] = [],
  o: {
    /** Response headers the page may read (a protocol's own, such as tus's `Upload-Offset`). */
    expose?: readonly string[]
    /** An `OPTIONS` without `Access-Control-Request-Method` goes to the handler (tus discovery). */
    discovery?: boolean
  } = {},
): FetchHandler {
  const allowed = new Set(origins)
  const allowedHeaders = [ALLOWED_HEADERS, ...extraHeaders].join(', ')
  const expose = (o.expose ?? []).join(', ')
  return async (request) => {
    const origin = request.headers.get('origin')
    const ok = origin !== null && allowed.has(origin)
    const preflight = request.headers.get('access-control-request-method') !== null
    if (request.method === 'OPTIONS' && (preflight || !o.discovery)) {
      const headers = new Headers({ Vary: 'Origin', 'Content-Length': '0' })
      if (ok) {
        headers.set('Access-Control-Allow-Origin', origin)
        headers.set('Access-Control-Allow-Methods', methods)
        headers.set('Access-Control-Allow-Headers', allowedHeaders)
        headers.set('Access-Control-Max-Age', '600')
      }
      return new Response(null, { status: 204, headers })
    }
    return withHeaders(await handler(request), (headers) =>
      addCorsHeaders(headers, ok ? origin : null, expose),
    )
  }
}

function addCorsHeaders(headers: Headers, allowedOrigin: string | null, expose: string): void {
  headers.append('Vary', 'Origin')
  if (allowedOrigin === null) return
  headers.set('Access-Control-Allow-Origin', allowedOrigin)
  if (expose !== '') headers.set('Access-Control-Expose-Headers', expose)
}
