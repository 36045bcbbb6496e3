import { importOptional } from '../shared/optional-deps.js'

/** One message as the upstream chat API takes it. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant'
  content: string
}

/** What one streamed chunk of the upstream answer carried. */
export interface ChatChunk {
  text?: string
  usage?: { input: number; output: number }
}

export interface ChatCall {
  model: string
  messages: readonly ChatMessage[]
  maxTokens: number
  /** Aborting it ends the upstream HTTP request at once. */
  signal: AbortSignal
}

/** The upstream OpenAI-compatible chat API, behind the one module that knows its client. */
export interface ModelClient {
  stream(call: ChatCall): AsyncIterable<ChatChunk>
  /** The upstream's HTTP status when the failure was an answer, for the logs. */
  statusOf(err: unknown): number | undefined
  /** Whether the client gave up waiting for the upstream's headers. */
  timedOut(err: unknown): boolean
}

export interface ModelClientOptions {
  baseUrl: string
  /** The model key: sent to the upstream only, never logged or answered. */
  apiKey: string
  /** Time allowed until the upstream answers with headers. */
  timeoutMs: number
  /** The name the output cap is sent under. */
  maxTokensParam: 'max_tokens' | 'max_completion_tokens'
}

/**
 * The official `openai` client with a base URL (OpenAI, DeepSeek, DashScope compatible mode,
 * Moonshot, Ollama, vLLM…). Everything it would read from the environment (`OPENAI_*`) is
 * passed explicitly, so only our configuration decides where requests go. No retries: a retry
 * would spend tokens twice and keep the user waiting past the timeout. The package is an
 * optional dependency, loaded only when the relay is configured.
 */
export async function openAiModelClient(o: ModelClientOptions): Promise<ModelClient> {
  const { default: OpenAI } = await importOptional(
    'openai',
    'ai.baseUrl, ai.apiKey and ai.model',
    () => import('openai'),
  )
  const client = new OpenAI({
    baseURL: o.baseUrl,
    apiKey: o.apiKey,
    organization: null,
    project: null,
    webhookSecret: null,
    timeout: o.timeoutMs,
    maxRetries: 0,
    logLevel: 'off',
  })
  return {
    async *stream(call) {
      const stream = await client.chat.completions.create(
        {
          model: call.model,
          messages: call.messages.map((m) => ({ role: m.role, content: m.content })),
          stream: true,
          stream_options: { include_usage: true },
          [o.maxTokensParam]: call.maxTokens,
        },
        { signal: call.signal },
      )
      for await (const chunk of stream) {
        const text = chunk.choices?.[0]?.delta?.content
        const out: ChatChunk = {}
        if (typeof text === 'string' && text.length > 0) out.text = text
        if (chunk.usage)
          out.usage = {
            input: chunk.usage.prompt_tokens ?? 0,
            output: chunk.usage.completion_tokens ?? 0,
          }
        if (out.text !== undefined || out.usage) yield out
      }
    },
    statusOf: (err) =>
      err instanceof OpenAI.APIError && typeof err.status === 'number' ? err.status : undefined,
    timedOut: (err) => err instanceof OpenAI.APIConnectionTimeoutError,
  }
}
