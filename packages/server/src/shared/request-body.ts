import { UeError } from './errors.js'

/** Compressed request bodies would let a small request inflate past every limit. */
export function assertIdentityEncoding(request: Request): void {
  const encoding = request.headers.get('content-encoding')
  if (encoding && encoding.trim().toLowerCase() !== 'identity')
    throw new UeError('UE_BODY_ENCODING')
}

/**
 * Iterates a request body, failing when a chunk does not arrive within `idleMs` (slow-body
 * guard) or when more than `maxBytes` arrive. Cancels the stream on early exit.
 */
export async function* readBody(
  request: Request,
  o: { maxBytes: number; idleMs: number; tooLarge?: UeError },
): AsyncGenerator<Uint8Array> {
  if (!request.body) return
  const reader = request.body.getReader()
  let total = 0
  try {
    while (true) {
      let timer: NodeJS.Timeout | undefined
      const idle = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new UeError('UE_BODY_INVALID', { detail: 'body idle timeout' })),
          o.idleMs,
        )
      })
      const next = await Promise.race([reader.read(), idle]).finally(() => clearTimeout(timer))
      if (next.done) return
      total += next.value.byteLength
      if (total > o.maxBytes) throw o.tooLarge ?? new UeError('UE_BODY_TOO_LARGE')
      yield next.value
    }
  } finally {
    reader.cancel().catch(() => {})
    reader.releaseLock()
  }
}

/** Reads a whole (small) body into memory under a byte cap. */
export async function readBodyBytes(request: Request, maxBytes: number, idleMs: number) {
  const chunks: Uint8Array[] = []
  for await (const chunk of readBody(request, { maxBytes, idleMs })) chunks.push(chunk)
  return Buffer.concat(chunks)
}
