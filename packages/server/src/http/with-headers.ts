/**
 * `response` with its headers changed by `change`: in place, so the answer stays the one the
 * handler made (the Node edge writes a complete body without reading its stream), or on a copy
 * (same status, status text, headers and body) when they cannot change, as a fetched
 * `Response`'s cannot.
 */
export function withHeaders(response: Response, change: (headers: Headers) => void): Response {
  try {
    change(response.headers)
    return response
  } catch {
    const copy = new Response(response.body, response)
    change(copy.headers)
    return copy
  }
}
