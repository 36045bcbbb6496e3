import { errorEvent } from '../shared/respond.js'
import type { AiShape } from './request.js'

const encoder = new TextEncoder()

function line(value: unknown): Uint8Array<ArrayBuffer> {
  return encoder.encode(`data: ${JSON.stringify(value)}\n\n`)
}

/** The SSE lines of one answer, in the shape the client asked in. */
export interface SseWriter {
  text(text: string): Uint8Array<ArrayBuffer>
  end(): Uint8Array<ArrayBuffer>
}

/**
 * ModStart: `{"type":"data","data":…}` then `{"type":"end","data":""}`. OpenAI: chat completion
 * chunks, then a finishing chunk and `[DONE]`. The dialog appends `delta.content` of every chunk
 * that has `choices`, so no chunk here ever lacks it (a usage-only chunk would end the dialog
 * with an error).
 */
export function sseWriter(shape: AiShape, model: string): SseWriter {
  if (shape === 'modstart')
    return {
      text: (data) => line({ type: 'data', data }),
      end: () => line({ type: 'end', data: '' }),
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
    end: () => concat(line(chunk('', 'stop')), encoder.encode('data: [DONE]\n\n')),
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
