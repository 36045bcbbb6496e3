import { builtOf, lazyInstance, lazyPrototype } from './lazy-web-object.js'
import { liteHeaders } from './lite-headers.js'

/**
 * Answers whose body is a string known when the `Response` is made. Such an answer is a
 * stand-in (`lazy-web-object.ts`): its status and headers are its own, and the real `Response`,
 * with the web stream undici makes for its body, is built only when something reads more. The
 * Node edge writes the string as it is, with a `Content-Length` (`http/node.ts`); any other host
 * reads `response.body` as usual.
 */
interface CompleteParts {
  body: string
  status: number
  statusText: string
  headers: Headers
}

const PARTS = Symbol('complete')

interface Complete {
  [PARTS]: CompleteParts
}

const prototype = lazyPrototype<Complete>(Response.prototype, {
  status() {
    return this[PARTS].status
  },
  statusText() {
    return this[PARTS].statusText
  },
  ok() {
    const { status } = this[PARTS]
    return status >= 200 && status < 300
  },
  // Changed in place before and after the real answer exists (CORS, the request id).
  headers() {
    return builtOf(this as unknown as Response)?.headers ?? this[PARTS].headers
  },
  bodyUsed() {
    return builtOf(this as unknown as Response)?.bodyUsed ?? false
  },
})

export interface CompleteInit {
  status?: number
  statusText?: string
  headers?: HeadersInit
}

export function completeResponse(body: string, init: CompleteInit = {}): Response {
  const parts: CompleteParts = {
    body,
    status: init.status ?? 200,
    statusText: init.statusText ?? '',
    headers: headersOf(init.headers),
  }
  return lazyInstance(prototype, { [PARTS]: parts }, () => {
    const { status, statusText, headers } = parts
    return new Response(body, { status, statusText, headers })
  })
}

function headersOf(init: HeadersInit | undefined): Headers {
  if (init instanceof Headers) return init
  if (init === undefined || (!Array.isArray(init) && !(Symbol.iterator in init)))
    return liteHeaders(init as Record<string, string> | undefined)
  return new Headers(init)
}

/** The body as it was given, unless something has started reading the stream since. */
export function completeBodyOf(response: Response): string | undefined {
  const parts = (response as unknown as Partial<Complete>)[PARTS]
  if (!parts || builtOf(response)?.bodyUsed) return undefined
  return parts.body
}
