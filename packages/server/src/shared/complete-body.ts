/**
 * Answers whose body is a string known when the `Response` is made. The Node edge writes such
 * a body as it is, with a `Content-Length`, instead of reading it back out of the web stream
 * (`http/node.ts`); any other host reads `response.body` as usual.
 */
const bodies = new WeakMap<Response, string>()

export function completeResponse(body: string, init: ResponseInit): Response {
  const response = new Response(body, init)
  bodies.set(response, body)
  return response
}

/** The body as it was given, unless something has started reading the stream since. */
export function completeBodyOf(response: Response): string | undefined {
  return response.bodyUsed ? undefined : bodies.get(response)
}
