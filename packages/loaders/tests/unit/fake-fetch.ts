export interface Call {
  url: string
  method: string
  headers: Record<string, string>
  body: unknown
  /** The body as given (a FormData, a Blob, a string). */
  raw: unknown
  signal: AbortSignal | undefined
}

type Reply = Response | Error | ((call: Call) => Promise<Response> | Response)

/** A fetch stand-in that records calls and answers from a queue (the last reply repeats). */
export function fakeFetch(...replies: Reply[]) {
  const calls: Call[] = []
  const fetch = (async (input: string | URL | Request, init: RequestInit = {}) => {
    const call: Call = {
      url: String(input),
      method: init.method ?? 'GET',
      headers: Object.fromEntries(new Headers(init.headers).entries()),
      body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
      raw: init.body,
      signal: init.signal ?? undefined,
    }
    calls.push(call)
    const reply = replies.length > 1 ? replies.shift() : replies[0]
    if (reply instanceof Error) throw reply
    if (typeof reply === 'function') return reply(call)
    return (reply as Response).clone()
  }) as typeof globalThis.fetch
  return { fetch, calls }
}

export const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } })

/** Lets pending promise callbacks run (setImmediate is not faked by mock timers). */
export const flush = async (rounds = 5) => {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setImmediate(r))
}

/** A reply that never settles until the request is aborted. */
export const hang = (call: Call) =>
  new Promise<Response>((_, reject) => {
    call.signal?.addEventListener('abort', () => reject(call.signal?.reason), { once: true })
  })
