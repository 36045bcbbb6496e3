import { errorEvent } from '../shared/respond.js'
import type { AiShape } from './request.js'

const encoder = new TextEncoder()

function line(value: unknown): Uint8Array<ArrayBuffer> {
  return encoder.encode(`data: ${JSON.stringify(value)}\n\n`)
}

/**
 * Why an answer ended: `stop`, the upstream finished it; `length`, the relay cut it at the
 * output cap (an upstream that ignored `max_tokens`).
 */
export type SseEnd = 'stop' | 'length'

/** The SSE lines of one answer, in the shape the client asked in. */
export interface SseWriter {
  text(text: string): Uint8Array<ArrayBuffer>
  end(reason?: SseEnd): Uint8Array<ArrayBuffer>
}

/**
 * ModStart: `{"type":"data","data":…}` then `{"type":"end","data":""}` (plus
 * `"finishReason":"length"` when the relay cut the answer). OpenAI: chat completion chunks, then
 * a finishing chunk (`finish_reason` `stop`, or `length` when cut) and `[DONE]`. The dialog appends `delta.content` of every chunk
 * that has `choices`, so no chunk here ever lacks it (a usage-only chunk would end the dialog
 * with an error).
 */
export function sseWriter(shape: AiShape, model: string): SseWriter {
  if (shape === 'modstart')
    return {
      text: (data) => line({ type: 'data', data }),
      end: (reason = 'stop') =>
        line(
          reason === 'stop'
            ? { type: 'end', data: '' }
            : { type: 'end', data: '', finishReason: reason },
        ),
    }
  const id = `chatcmpl-${crypto.randomUUID()}`
  const created = Math.floor(Date.now() / 1000)
  const chunk = (content: string, finish: string | null) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta: { content }, finish_reason: finish }],
  })
  return {
    text: (content) => line(chunk(content, null)),
    end: (reason = 'stop') => concat(line(chunk('', reason)), encoder.encode('data: [DONE]\n\n')),
  }
}

/** The error event of `shared/respond.ts`, for a stream that has started. */
export function sseError(code: string, message: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(errorEvent(code, message))
}

export const SSE_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  // Proxies such as nginx would otherwise hold the stream back until it ends.
  'X-Accel-Buffering': 'no',
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(a.byteLength + b.byteLength)
  out.set(a)
  out.set(b, a.byteLength)
  return out
}
