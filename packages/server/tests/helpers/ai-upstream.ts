import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** What the fake upstream does with the next chat completion request. */
export type UpstreamMode =
  /** Streams `pieces`, then usage when asked for it (`stream_options.include_usage`), then [DONE]. */
  | 'stream'
  /** Answers 401 with an OpenAI-style error that quotes the key it was sent. */
  | 'fail'
  /** Sends the headers and one chunk, then nothing, forever. */
  | 'stall'
  /** Sends a chunk every 50 ms until the connection is closed. */
  | 'drip'
  /**
   * Ignores `max_tokens`: streams `floodPiece` again and again, as fast as the connection takes
   * it, until `floodChars` characters are out (then finishes as `stream` does) or the
   * connection is closed.
   */
  | 'flood'

export interface SeenRequest {
  path: string
  authorization: string | undefined
  body: {
    model?: string
    messages?: { role: string; content: string }[]
    stream?: boolean
    stream_options?: { include_usage?: boolean }
    max_tokens?: number
  }
}

export interface AiUpstream {
  /** The base URL the server is configured with (`…/v1`). */
  baseUrl: string
  mode: UpstreamMode
  pieces: string[]
  usage: { prompt_tokens: number; completion_tokens: number }
  /** When set, the usage reported for each request, from what it was sent (instead of `usage`). */
  usageOf?: (body: SeenRequest['body']) => { prompt_tokens: number; completion_tokens: number }
  /** The text each `flood` chunk carries, and how many characters a `flood` answer has. */
  floodPiece: string
  floodChars: number
  /** Bytes of answer written so far, over all requests. */
  bytesSent(): number
  requests: SeenRequest[]
  /** Requests whose connection the caller closed before the upstream had finished answering. */
  closedEarly(): number
  /** Requests still being answered. */
  open(): number
}

/**
 * An OpenAI-compatible chat completions API on 127.0.0.1, written for the tests: it can stream,
 * fail, stall and report usage, and it records what it was sent and who hung up on it.
 */
export async function startAiUpstream(t: {
  after(fn: () => Promise<void>): void
}): Promise<AiUpstream> {
  let closedEarly = 0
  let open = 0
  let bytesSent = 0
  const live = new Set<ServerResponse>()
  const state: AiUpstream = {
    baseUrl: '',
    mode: 'stream',
    pieces: ['Hello', ', ', 'world'],
    usage: { prompt_tokens: 12, completion_tokens: 3 },
    floodPiece: 'x'.repeat(1_000),
    floodChars: 4_000_000,
    bytesSent: () => bytesSent,
    requests: [],
    closedEarly: () => closedEarly,
    open: () => open,
  }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      let body: SeenRequest['body'] = {}
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      } catch {
        // recorded as empty
      }
      state.requests.push({ path: req.url ?? '', authorization: req.headers.authorization, body })
      open++
      live.add(res)
      res.on('close', () => {
        open--
        live.delete(res)
        if (!res.writableFinished) closedEarly++
      })
      const write = res.write.bind(res) as (chunk: string) => boolean
      res.write = ((chunk: string, ...rest: never[]) => {
        bytesSent += Buffer.byteLength(chunk)
        return (write as (c: string, ...r: never[]) => boolean)(chunk, ...rest)
      }) as typeof res.write
      answer(state, body, req.headers.authorization ?? '', res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => {
    for (const res of live) res.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  state.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
  return state
}

function answer(
  state: AiUpstream,
  body: SeenRequest['body'],
  authorization: string,
  res: ServerResponse,
) {
  if (state.mode === 'fail') {
    const key = authorization.replace(/^Bearer /, '')
    res.writeHead(401, { 'content-type': 'application/json' })
    res.end(
      JSON.stringify({
        error: {
          message: `Incorrect API key provided: ${key}`,
          type: 'invalid_request_error',
          code: 'invalid_api_key',
        },
      }),
    )
    return
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  const model = body.model ?? 'unknown'
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({
      id: 'chatcmpl-test',
      object: 'chat.completion.chunk',
      created: 1,
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    })}\n\n`
  res.write(chunk({ role: 'assistant', content: '' }))
  if (state.mode === 'stall') {
    res.write(chunk({ content: 'thinking' }))
    return
  }
  if (state.mode === 'drip') {
    const timer = setInterval(() => res.write(chunk({ content: 'drip ' })), 50)
    res.on('close', () => clearInterval(timer))
    return
  }
  const finish = () => {
    res.write(chunk({}, 'stop'))
    const usage = state.usageOf?.(body) ?? state.usage
    if (body.stream_options?.include_usage)
      res.write(
        `data: ${JSON.stringify({ id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 1, model, choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } })}\n\n`,
      )
    res.end('data: [DONE]\n\n')
  }
  if (state.mode === 'flood') {
    const event = chunk({ content: state.floodPiece })
    let left = state.floodChars
    const pump = () => {
      while (left > 0 && !res.destroyed) {
        left -= state.floodPiece.length
        if (!res.write(event)) return void res.once('drain', pump)
      }
      if (!res.destroyed) finish()
    }
    pump()
    return
  }
  for (const piece of state.pieces) res.write(chunk({ content: piece }))
  finish()
}
