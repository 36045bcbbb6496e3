/** A credential as the request carried it. The token is never logged or echoed. */
export interface Presented {
  token: string
  channel: 'authorization' | 'header' | 'query'
}

export interface ChannelOptions {
  /** A second header that may carry the token (raw or as `Bearer …`). */
  header?: string | undefined
  /** A query parameter that may carry the token; off when absent. */
  queryParam?: string | undefined
}

const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i
/** The scheme word alone: `Bearer`, `Bearer xyz`, `bearer  xyz`, but not `BearerX` or `Basic …`. */
const BEARER_SCHEME = /^Bearer(?: |$)/i
const RAW = /^[A-Za-z0-9._~+/-]+=*$/
const MAX_TOKEN = 8192

/**
 * The credential of a request: `Authorization: Bearer`, then the configured header, then the
 * configured query parameter. `malformed` when a channel is used but holds no usable token (a
 * Bearer value with other characters, a repeated parameter): that counts as a failed attempt.
 * A channel whose value is blank is not used: a signed-out page sends `Bearer ` or an empty
 * `X-Token` (or `null`/`undefined`, a missing variable written into the header), and that is a
 * missing credential, never a failed one. `Authorization` in another scheme (`Basic` from a
 * site behind HTTP Basic) is not ours: it is skipped, and the other channels are read.
 */
export function presentedCredential(
  request: Request,
  url: URL,
  o: ChannelOptions,
): Presented | 'malformed' | null {
  const authorization = request.headers.get('authorization')
  if (
    authorization !== null &&
    BEARER_SCHEME.test(authorization) &&
    !blank(authorization.replace(BEARER_SCHEME, ''))
  ) {
    const token = BEARER.exec(authorization)?.[1]
    return usable(token) ? { token, channel: 'authorization' } : 'malformed'
  }
  if (o.header) {
    const value = request.headers.get(o.header)
    if (value !== null && !blank(value.replace(BEARER_SCHEME, ''))) {
      const trimmed = value.trim()
      const token = BEARER.exec(trimmed)?.[1] ?? (RAW.test(trimmed) ? trimmed : undefined)
      return usable(token) ? { token, channel: 'header' } : 'malformed'
    }
  }
  if (o.queryParam) {
    const values = url.searchParams.getAll(o.queryParam).filter((v) => !blank(v))
    if (values.length === 0) return null
    const token = values.length === 1 ? values[0] : undefined
    return usable(token) && RAW.test(token) ? { token, channel: 'query' } : 'malformed'
  }
  return null
}

/** What a signed-out page sends where a token would go: nothing, spaces, or an unset variable. */
function blank(value: string): boolean {
  const v = value.trim()
  return v === '' || v === 'null' || v === 'undefined'
}

function usable(token: string | undefined): token is string {
  return token !== undefined && token.length > 0 && token.length <= MAX_TOKEN
}

/** Query parameters a page's `serverUrl` commonly carries a token in. */
const TOKEN_LIKE_PARAMS = [
  'token',
  'access_token',
  'accessToken',
  'auth',
  'auth_token',
  'authToken',
  'jwt',
  'bearer',
]

/**
 * The query parameter that seems to hold a token the server did not read: one of the usual
 * names, while `queryParam` is off or names another parameter. Null when there is none.
 */
export function unreadQueryToken(url: URL, o: ChannelOptions): string | null {
  for (const name of TOKEN_LIKE_PARAMS)
    if (name !== o.queryParam && url.searchParams.get(name)) return name
  return null
}
