import * as z from '#zod'
import { UeError } from '../shared/errors.js'
import type { ChatMessage } from './model-client.js'

/** Which body the client sent, and so which SSE lines it reads back. */
export type AiShape = 'modstart' | 'openai'

export interface AiAsk {
  shape: AiShape
  /** The model the client named (OpenAI shape only); absent: the configured one. */
  model?: string
  messages: ChatMessage[]
  /** The client's own output cap, when lower than ours. */
  maxTokens?: number
}

const text = z.string()
const positiveInt = z.number().check(z.int(), z.positive())
const part = z.looseObject({ type: z.string(), text: z.optional(z.string()) })

const ModStartBody = z.looseObject({
  systemPrompt: z.optional(text),
  prompt: z.optional(text),
})

const OpenAiBody = z.looseObject({
  model: z.optional(z.string().check(z.maxLength(200))),
  messages: z
    .array(
      z.looseObject({
        role: z.enum(['system', 'developer', 'user', 'assistant']),
        content: z.union([text, z.array(part).check(z.maxLength(64)), z.null()]),
      }),
    )
    .check(z.minLength(1), z.maxLength(64)),
  stream: z.optional(z.boolean()),
  max_tokens: z.optional(positiveInt),
  max_completion_tokens: z.optional(positiveInt),
})

/**
 * Reads either body the UEditor Plus AI dialog sends: `{systemPrompt, prompt}` (driver
 * ModStart) or a chat completion `{model, messages, stream: true}` (OpenAI-compatible drivers).
 */
export function parseAsk(body: unknown): AiAsk {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new UeError('UE_VALIDATION_FAILED', { detail: 'the body must be a JSON object' })
  if ('messages' in body) {
    const r = OpenAiBody.safeParse(body)
    if (!r.success) throw invalid(r.error)
    if (r.data.stream === false)
      throw new UeError('UE_VALIDATION_FAILED', { detail: 'only stream: true is served' })
    const ask: AiAsk = {
      shape: 'openai',
      messages: normalise(
        r.data.messages.map((m) => ({
          role: m.role === 'developer' ? 'system' : m.role,
          content: contentText(m.content),
        })),
      ),
    }
    if (r.data.model) ask.model = r.data.model
    const cap = r.data.max_completion_tokens ?? r.data.max_tokens
    if (cap !== undefined) ask.maxTokens = cap
    return ask
  }
  if ('systemPrompt' in body || 'prompt' in body) {
    const r = ModStartBody.safeParse(body)
    if (!r.success) throw invalid(r.error)
    return {
      shape: 'modstart',
      messages: normalise([
        { role: 'system', content: r.data.systemPrompt ?? '' },
        { role: 'user', content: r.data.prompt ?? '' },
      ]),
    }
  }
  throw new UeError('UE_VALIDATION_FAILED', {
    detail: 'expected {systemPrompt, prompt} or {model, messages, stream}',
  })
}

/** Characters of prompt text, for the size cap. */
export function promptChars(messages: readonly ChatMessage[]): number {
  return messages.reduce((n, m) => n + m.content.length, 0)
}

function contentText(content: string | { type: string; text?: string | undefined }[] | null) {
  if (content === null) return ''
  if (typeof content === 'string') return content
  return content
    .filter((p) => p.type === 'text' && typeof p.text === 'string')
    .map((p) => p.text)
    .join('')
}

/**
 * Empty messages are dropped. The dialog's free-text box sends what the user typed as the
 * system prompt with an empty prompt; with no user message left, the last system message
 * becomes the user's, since some upstreams answer nothing to a system prompt alone.
 */
function normalise(messages: ChatMessage[]): ChatMessage[] {
  const kept = messages.filter((m) => m.content.trim().length > 0)
  if (kept.length === 0)
    throw new UeError('UE_VALIDATION_FAILED', { detail: 'the prompt is empty' })
  if (!kept.some((m) => m.role === 'user')) {
    const last = kept.map((m) => m.role).lastIndexOf('system')
    if (last >= 0) kept[last] = { role: 'user', content: (kept[last] as ChatMessage).content }
  }
  return kept
}

function invalid(error: z.core.$ZodError): UeError {
  const issue = error.issues[0]
  const where = issue?.path.join('.') || 'body'
  return new UeError('UE_VALIDATION_FAILED', { detail: `${where}: ${issue?.message ?? 'invalid'}` })
}
