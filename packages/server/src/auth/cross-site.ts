/**
 * Whether a browser sent this request from a page of another site: what an ambient credential
 * (the hook's session cookie) must not authorise for an action that changes something.
 *
 * - An `Origin` listed in the CORS origins is the editor's own page: allowed, whatever
 *   `Sec-Fetch-Site` says (a page on another site that UEditor is configured for).
 * - `Sec-Fetch-Site`, which no page can set, decides next: `same-origin` and `none` (typed or
 *   bookmarked by the user) pass; `cross-site`, `same-site` and anything else do not.
 * - Browsers that send no `Sec-Fetch-Site` (plain-HTTP sites other than localhost, older
 *   browsers): an `Origin` must name this server's own host (the `Host` the request came with).
 * - Neither header: not a browser (curl, a server-side client), which no page can drive: allowed.
 */
export function isCrossSite(request: Request, url: URL, corsOrigins: ReadonlySet<string>): boolean {
  const origin = request.headers.get('origin')
  if (origin !== null && corsOrigins.has(origin)) return false
  const site = request.headers.get('sec-fetch-site')
  if (site !== null) return site !== 'same-origin' && site !== 'none'
  if (origin === null) return false
  // The scheme is left out: behind a proxy that ends TLS the request reaches us as http.
  return URL.parse(origin)?.host !== url.host
}
