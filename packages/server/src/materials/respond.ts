import type { UeError } from '../shared/errors.js'
import { messageFor } from '../shared/messages.js'

// Material HTML travels inside JSON: escaping <, >, & keeps the body inert if it is ever
// sniffed or embedded as HTML or script.
const UNSAFE_IN_SCRIPT = /[<>&\u2028\u2029]/g

export function jsonResponse(value: unknown, status = 200, extra: HeadersInit = {}): Response {
  const headers = new Headers({
    'Content-Type': 'application/json; charset=utf-8',
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-store',
  })
  for (const [k, v] of new Headers(extra)) headers.set(k, v)
  const body = JSON.stringify(value).replace(
    UNSAFE_IN_SCRIPT,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )
  return new Response(body, { status, headers })
}

/**
 * `{error: {code, message}}` with the code's status. Messages are English (this is an API for
 * integrators; the stable `code` is what programs should read) plus the safe detail, if any.
 */
export function errorResponse(error: UeError, extra: HeadersInit = {}): Response {
  const base = messageFor('en', error.code)
  const message = error.detail ? `${base}: ${error.detail}` : base
  const response = jsonResponse({ error: { code: error.code, message } }, error.status, extra)
  refusals.set(response, error.code)
  return response
}

const refusals = new WeakMap<Response, string>()

/** The error code of a refusal made by `errorResponse`, for counting it. */
export function refusalCodeOf(response: Response): string | undefined {
  return refusals.get(response)
}
