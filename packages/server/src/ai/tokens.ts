import type { ChatMessage } from './model-client.js'

/**
 * Token counts the relay works out itself, before the upstream reports any (docs/ai.md).
 *
 * A prompt is counted high: one token per UTF-8 byte. The tokenizers of the upstreams we serve
 * (OpenAI, DeepSeek, Qwen, Moonshot, Llama and the others served by Ollama and vLLM) are
 * byte-level, so no token covers less than one byte and no text has more tokens than bytes.
 * English runs about 4 bytes a token and Chinese about 3, so this overcounts; it never
 * undercounts. The chat template adds a few tokens of its own per message, and some upstreams a
 * short system prompt of their own: `PER_MESSAGE` and `PER_CALL` cover those.
 *
 * An answer is counted low instead, as one token per `OUTPUT_BYTES_PER_TOKEN` bytes: it is
 * what the relay cuts an answer at, and an honest model's answer of N tokens (English, Chinese,
 * code) stays under N times that, so only an upstream that ignores `max_tokens` is ever cut.
 */
export const PER_MESSAGE = 8
export const PER_CALL = 32
export const OUTPUT_BYTES_PER_TOKEN = 6

const encoder = new TextEncoder()

/** UTF-8 bytes of `text`, without encoding it. */
export function utf8Bytes(text: string): number {
  let n = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        n += 4
        i++
      } else n += 3
    } else n += 3
  }
  return n
}

/** The most tokens `messages` can be as a prompt (see above). */
export function promptTokenBound(messages: readonly ChatMessage[]): number {
  return messages.reduce((n, m) => n + utf8Bytes(m.content) + PER_MESSAGE, PER_CALL)
}

/** The longest start of `text` that is at most `bytes` UTF-8 bytes, cut between characters. */
export function cutToBytes(text: string, bytes: number): string {
  if (bytes <= 0) return ''
  const { read } = encoder.encodeInto(text, new Uint8Array(bytes))
  return text.slice(0, read)
}
