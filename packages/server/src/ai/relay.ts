import type { AiUsageStore } from '../db/ai-usage.js'
import { limitKey } from '../limits/client-key.js'
import type { Limiters } from '../limits/limiter.js'
import { UeError, type UeErrorCode } from '../shared/errors.js'
import { readJsonBody } from '../shared/json-body.js'
import { requestLogger } from '../shared/log.js'
import type { BodyTimeouts } from '../shared/request-body.js'
import type { Logger } from '../shared/types.js'
import {
  type AiLimitOptions,
  type AiReservation,
  createAiBudget,
  createAiLimits,
} from './limits.js'
import type { ChatChunk, ModelClient } from './model-client.js'
import { type AiAsk, parseAsk, promptChars } from './request.js'
import { SSE_HEADERS, sseError, sseWriter } from './sse.js'
import { cutToBytes, OUTPUT_BYTES_PER_TOKEN, promptTokenBound, utf8Bytes } from './tokens.js'

export interface AiRelayOptions {
  client: ModelClient
  /** Where the per-user counts are kept (on every node together on PostgreSQL). */
  limiters: Limiters
  /** The default model; always allowed. */
  model: string
  /** More models a client may name (OpenAI body); any other is refused. */
  models: readonly string[]
  maxPromptChars: number
  maxOutputTokens: number
  /** The whole call, first byte to last. */
  timeoutMs: number
  /** The longest wait for the next piece of the answer (the first one included). */
  idleTimeoutMs: number
  /** The longest a client may take nothing while part of the answer waits for it. */
  writeTimeoutMs: number
  /** Put the prompt text in the audit line (off by default). */
  logPrompts: boolean
  limits: AiLimitOptions
  /** Where the daily budget's counts live (the metadata database). */
  usage: AiUsageStore
  bodyTimeouts: BodyTimeouts
  /** The readable message of a code, in the server's locale. */
  message(code: UeErrorCode): string
  log: Logger
  /** The model key, scrubbed out of anything logged. */
  secret: string
}

export interface AiCaller {
  /** Null: anonymous (only let through on loopback in auth mode none). */
  user: string | null
  address?: string | undefined
}

export interface AiRelay {
  /**
   * Reads and checks one call's body, then admits it and reserves its tokens, then answers an
   * SSE stream relaying the upstream. Throws a UeError for a refusal before the stream starts;
   * afterwards failures are `error` events.
   */
  handle(request: Request, caller: AiCaller): Promise<Response>
}

/** Text and JSON escaping: a character of prompt can take up to 6 bytes of body. */
const BODY_BYTES_PER_CHAR = 6
const BODY_OVERHEAD = 16_384
/** SSE events queued for a client before further text is joined into one event. */
const QUEUED_EVENTS = 16

export function createAiRelay(o: AiRelayOptions): AiRelay {
  const limits = createAiLimits(o.limiters, o.limits)
  const budget = createAiBudget(o.limits.dailyTokens, o.usage)
  const allowed = new Set([o.model, ...o.models])
  const maxBodyBytes = o.maxPromptChars * BODY_BYTES_PER_CHAR + BODY_OVERHEAD
  const scrub = (s: string) => (o.secret ? s.split(o.secret).join('[Redacted]') : s)

  /** The body, read and checked before the call takes a slot or any budget. */
  const readAsk = async (request: Request, key: string): Promise<[AiAsk, string]> => {
    const doneReading = limits.reading(key)
    let ask: AiAsk
    try {
      ask = parseAsk(
        await readJsonBody(request, { maxBytes: maxBodyBytes, timeouts: o.bodyTimeouts }),
      )
    } finally {
      doneReading()
    }
    const model = ask.model ?? o.model
    if (!allowed.has(model))
      throw new UeError('UE_AI_MODEL_NOT_ALLOWED', { detail: 'not in ai.models' })
    if (promptChars(ask.messages) > o.maxPromptChars) throw new UeError('UE_AI_PROMPT_TOO_LARGE')
    return [ask, model]
  }

  return {
    async handle(request, caller) {
      const log = requestLogger(o.log, request)
      const audit = (line: Record<string, unknown>, failed: boolean) => {
        if (failed) log.warn({ audit: 'ai', ...line }, 'ai call')
        else log.info({ audit: 'ai', ...line }, 'ai call')
      }
      const started = performance.now()
      const key = limitKey(caller) ?? 'anonymous'
      const who = { user: caller.user, address: caller.address }
      let release: (() => void) | undefined
      let ask: AiAsk
      let model: string
      let promptBound: number
      let reservation: AiReservation
      try {
        // Refused early when it would be refused anyway; nothing is taken until the body is in.
        await limits.check(key)
        ;[ask, model] = await readAsk(request, key)
        promptBound = promptTokenBound(ask.messages)
        release = await limits.admit(key)
        reservation = await budget.reserve(
          key,
          promptBound,
          Math.min(o.maxOutputTokens, ask.maxTokens ?? o.maxOutputTokens),
        )
      } catch (e) {
        release?.()
        const outcome = e instanceof UeError ? e.code : 'UE_INTERNAL'
        audit({ ...who, outcome, tokensIn: 0, tokensOut: 0, ms: elapsed(started) }, true)
        throw e
      }
      const maxTokens = reservation.outputCap
      // An upstream that ignores max_tokens is cut here (see tokens.ts).
      const cutBytes = maxTokens * OUTPUT_BYTES_PER_TOKEN
      const writer = sseWriter(ask.shape, model)
      const upstream = new AbortController()
      let clientGone = false
      let stalled = false
      let timedOut = false
      const onClientGone = () => {
        clientGone = true
        upstream.abort(new Error('the client went away'))
      }

      // What the client has not taken yet. The upstream is read as fast as it arrives (a
      // paused upstream parser that sees the upstream close its connection ends the process on
      // Node 22+, docs/security.md, row S65). Past QUEUED_EVENTS events the client has not
      // taken, text is joined into `pending` and sent as one event when it takes more, so what
      // is held is the answer's text, bounded by the cut, not one event per upstream chunk.
      let pending = ''
      let last: Uint8Array | undefined
      let closed = false
      let enqueued = 0
      let taken = 0
      let lastTaken = performance.now()
      let watch: NodeJS.Timeout | undefined
      let stream: ReadableStreamDefaultController<Uint8Array>
      const room = () => stream.desiredSize ?? 0
      // Events the client has taken: the stream counts chunks (QUEUED_EVENTS at most).
      const noteTaken = () => {
        const now = enqueued - (QUEUED_EVENTS - room())
        if (now > taken) {
          taken = now
          lastTaken = performance.now()
        }
      }
      const enqueue = (bytes: Uint8Array) => {
        enqueued++
        stream.enqueue(bytes)
      }

      const close = () => {
        closed = true
        clearInterval(watch)
      }
      const flush = () => {
        if (closed || clientGone) return
        try {
          noteTaken()
          // Cleared before enqueueing: an enqueue can call pull, and so flush, again at once.
          if (pending && room() > 0) {
            const text = pending
            pending = ''
            enqueue(writer.text(text))
          }
          if (!pending && last && room() > 0) {
            const bytes = last
            last = undefined
            close()
            enqueue(bytes)
            stream.close()
          }
        } catch {
          // cancelled meanwhile
          onClientGone()
          close()
        }
      }
      const send = (text: string) => {
        if (clientGone) return
        pending += text
        flush()
      }
      const sendLast = (bytes: Uint8Array) => {
        if (clientGone) return
        last = bytes
        flush()
      }
      // A client that takes nothing for writeTimeoutMs while something waits for it ends the
      // call: the upstream is aborted, the slot freed, the connection closed.
      const checkStalled = () => {
        if (closed || clientGone) return close()
        noteTaken()
        const waiting = pending !== '' || last !== undefined || room() < QUEUED_EVENTS
        if (!waiting || performance.now() - lastTaken < o.writeTimeoutMs) return
        stalled = true
        clientGone = true
        upstream.abort(new Error('the client stopped reading'))
        pending = ''
        last = undefined
        close()
        stream.error(new Error('the client stopped reading'))
      }

      const body = new ReadableStream<Uint8Array>(
        {
          start(controller) {
            stream = controller
            watch = setInterval(checkStalled, Math.max(20, Math.min(1_000, o.writeTimeoutMs / 4)))
            if (request.signal.aborted) onClientGone()
            else request.signal.addEventListener('abort', onClientGone, { once: true })
            const timeout = () => {
              timedOut = true
              upstream.abort(new Error('the upstream timed out'))
            }
            const deadline = setTimeout(timeout, o.timeoutMs)
            let idle = setTimeout(timeout, o.idleTimeoutMs)
            const stillWaiting = new Promise<never>((_, reject) => {
              upstream.signal.addEventListener('abort', () => reject(upstream.signal.reason), {
                once: true,
              })
            })
            stillWaiting.catch(() => {})

            let usage: ChatChunk['usage']
            let outBytes = 0
            let cut = false
            let outcome = 'ok'
            let status: number | undefined
            const pump = async () => {
              const chunks = o.client
                .stream({ model, messages: ask.messages, maxTokens, signal: upstream.signal })
                [Symbol.asyncIterator]()
              try {
                while (true) {
                  // Raced with the abort, so a stalled upstream cannot hold the answer open.
                  const next = await Promise.race([chunks.next(), stillWaiting])
                  if (next.done) break
                  clearTimeout(idle)
                  idle = setTimeout(timeout, o.idleTimeoutMs)
                  if (next.value.usage) usage = next.value.usage
                  const text = next.value.text
                  if (!text) continue
                  const bytes = utf8Bytes(text)
                  if (outBytes + bytes > cutBytes) {
                    const kept = cutToBytes(text, cutBytes - outBytes)
                    outBytes += utf8Bytes(kept)
                    if (kept) send(kept)
                    cut = true
                    break
                  }
                  outBytes += bytes
                  send(text)
                }
                if (cut) {
                  outcome = 'truncated'
                  chunks.return?.().catch(() => {})
                  log.warn({ maxTokens, outBytes }, 'ai answer cut at the output cap')
                }
                sendLast(writer.end(cut ? 'length' : 'stop'))
              } catch (err) {
                chunks.return?.().catch(() => {})
                if (stalled) outcome = 'stalled'
                else if (clientGone) outcome = 'aborted'
                else {
                  const code: UeErrorCode =
                    timedOut || o.client.timedOut(err) ? 'UE_AI_TIMEOUT' : 'UE_AI_UPSTREAM_FAILED'
                  outcome = code
                  status = o.client.statusOf(err)
                  log.warn(
                    { code, upstreamStatus: status, reason: scrub(String(errorText(err))) },
                    'ai upstream failed',
                  )
                  sendLast(sseError(code, o.message(code)))
                }
              }
            }
            const finish = async () => {
              clearTimeout(deadline)
              clearTimeout(idle)
              request.signal.removeEventListener('abort', onClientGone)
              upstream.abort(new Error('done'))
              const tokensIn = usage?.input ?? promptBound
              // Without reported usage, an answer counts as its bytes up to the cap it was sent
              // with: more than its tokens for an upstream that honours max_tokens.
              const tokensOut = usage?.output ?? Math.min(outBytes, maxTokens)
              // Settled before the slot is freed and the answer ends, so the user's next call
              // sees this one's tokens, on any node. If it fails, the reservation stays counted.
              await reservation.settle(tokensIn + tokensOut).catch((e: unknown) => {
                const cause = (e as { cause?: unknown } | null)?.cause
                log.error(
                  { ...who, tokens: tokensIn + tokensOut, err: e, cause },
                  'ai usage not counted',
                )
              })
              release?.()
              const line: Record<string, unknown> = {
                ...who,
                model,
                shape: ask.shape,
                tokensIn,
                tokensOut,
                usage: usage ? 'reported' : 'estimated',
                ms: elapsed(started),
                outcome,
              }
              if (status !== undefined) line.upstreamStatus = status
              if (o.logPrompts) line.prompt = ask.messages
              audit(line, outcome !== 'ok' && outcome !== 'aborted')
            }
            void pump().then(finish, finish)
          },
          pull() {
            flush()
          },
          cancel() {
            close()
            onClientGone()
          },
        },
        new CountQueuingStrategy({ highWaterMark: QUEUED_EVENTS }),
      )
      return new Response(body, { status: 200, headers: SSE_HEADERS })
    },
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err)
}

function elapsed(started: number): number {
  return Math.round(performance.now() - started)
}
