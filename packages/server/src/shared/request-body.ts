import { Readable, Transform, type Writable } from 'node:stream'
import { UeError, type UeErrorCode } from './errors.js'
import { pump } from './pump.js'

/** Compressed request bodies would let a small request inflate past every limit. */
export function assertIdentityEncoding(request: Request): void {
  const encoding = request.headers.get('content-encoding')
  if (encoding && encoding.trim().toLowerCase() !== 'identity')
    throw new UeError('UE_BODY_ENCODING')
}

/** The deadlines a request body must meet (the `http.*` config keys of the same names). */
export interface BodyTimeouts {
  /** No byte for this long ends the body. */
  bodyIdleTimeoutMs: number
  /** The whole body must arrive within this time. */
  bodyTimeoutMs: number
  /** After the grace time, the average rate since the start must stay at or above this (bytes/s; 0: off). */
  minBodyRate: number
  bodyGraceMs: number
}

/**
 * Watches one request body: `signal` aborts, with a `UeError` as its reason, when the body
 * stalls, crawls below the minimum rate, outlives its deadline, or the client goes away. It runs
 * on its own timer, so it fires even while nobody is reading (a parser waiting on a slow disk or
 * stuck on a bad part), and holds its timer strongly, so garbage collection cannot silence it.
 */
export class BodyWatch {
  readonly signal: AbortSignal
  private readonly controller = new AbortController()
  private readonly startedAt = Date.now()
  private lastByteAt = this.startedAt
  private bytes = 0
  private readonly timer: NodeJS.Timeout
  private readonly onClientGone: () => void
  private readonly clientGone: AbortSignal | undefined

  constructor(
    private readonly t: BodyTimeouts,
    clientGone?: AbortSignal,
  ) {
    this.signal = this.controller.signal
    const tick = Math.max(20, Math.min(1_000, t.bodyIdleTimeoutMs / 4, t.bodyGraceMs / 4))
    this.timer = setInterval(() => this.check(), tick)
    this.clientGone = clientGone
    this.onClientGone = () =>
      this.abort(new UeError('UE_BODY_INVALID', { detail: 'the client closed the connection' }))
    if (clientGone?.aborted) this.onClientGone()
    else clientGone?.addEventListener('abort', this.onClientGone, { once: true })
  }

  received(byteCount: number): void {
    this.bytes += byteCount
    this.lastByteAt = Date.now()
  }

  /** Throws the reason if the watch has fired. */
  throwIfFired(): void {
    if (this.signal.aborted) throw this.signal.reason
  }

  stop(): void {
    clearInterval(this.timer)
    this.clientGone?.removeEventListener('abort', this.onClientGone)
  }

  private check(): void {
    const now = Date.now()
    const elapsed = now - this.startedAt
    if (now - this.lastByteAt >= this.t.bodyIdleTimeoutMs)
      this.abort(new UeError('UE_BODY_TIMEOUT', { detail: 'body idle timeout' }))
    else if (elapsed >= this.t.bodyTimeoutMs)
      this.abort(new UeError('UE_BODY_TIMEOUT', { detail: 'body deadline' }))
    else if (
      this.t.minBodyRate > 0 &&
      elapsed >= this.t.bodyGraceMs &&
      (this.bytes * 1000) / elapsed < this.t.minBodyRate
    )
      this.abort(new UeError('UE_BODY_TIMEOUT', { detail: 'body below the minimum rate' }))
  }

  private abort(reason: UeError): void {
    this.stop()
    if (!this.signal.aborted) this.controller.abort(reason)
  }
}

/**
 * Iterates a request body under a byte cap, failing with the watch's reason when it fires.
 * Cancels the stream on early exit.
 */
export async function* readBody(
  request: Request,
  o: { maxBytes: number; watch: BodyWatch; tooLarge?: UeErrorCode },
): AsyncGenerator<Uint8Array> {
  if (!request.body) return
  if (request.bodyUsed || request.body.locked) throw new UeError('UE_BODY_CONSUMED')
  const reader = request.body.getReader()
  const { signal } = o.watch
  // Cancelling settles a pending read (done), so a stalled body still ends when the watch fires.
  // (Racing each read against one long-lived promise would keep every chunk reachable from it.)
  const onFired = () => {
    reader.cancel(signal.reason).catch(() => {})
  }
  signal.addEventListener('abort', onFired, { once: true })
  let total = 0
  try {
    while (true) {
      o.watch.throwIfFired()
      const next = await reader.read()
      o.watch.throwIfFired()
      if (next.done) return
      total += next.value.byteLength
      o.watch.received(next.value.byteLength)
      if (total > o.maxBytes) throw new UeError(o.tooLarge ?? 'UE_BODY_TOO_LARGE')
      yield next.value
    }
  } finally {
    signal.removeEventListener('abort', onFired)
    reader.cancel().catch(() => {})
    try {
      reader.releaseLock()
    } catch {
      // a read still pending after the watch fired: the cancel above settles it
    }
  }
}

/**
 * What the Node edge offers beside a request: a way to take its body as the Node stream it
 * arrives on, so a Node reader skips the web stream. `take` answers undefined when the web
 * stream may be in use already, and throws `UE_BODY_CONSUMED` when a host already read the body.
 */
const nodeBodies = new WeakMap<Request, () => NodeBody | undefined>()

/** A request body as the Node stream it arrives on. */
export interface NodeBody {
  stream: Readable
  /** Told of every byte read from `stream`, so the edge knows how much is left to drain. */
  read(bytes: number): void
}

export function offerNodeBody(request: Request, take: () => NodeBody | undefined): void {
  nodeBodies.set(request, take)
}

/**
 * Pipes a request body into `destination` under a byte cap, failing with the watch's reason
 * when it fires. The Node stream itself when the Node edge offers it, else the web stream.
 */
export async function pipeBody(
  request: Request,
  destination: Writable,
  o: { maxBytes: number; watch: BodyWatch; tooLarge?: UeErrorCode },
): Promise<void> {
  const node = nodeBodies.get(request)?.()
  const { signal } = o.watch
  if (!node) {
    await pump([Readable.from(readBody(request, o)), destination], signal)
    return
  }
  let total = 0
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      total += chunk.length
      node.read(chunk.length)
      o.watch.received(chunk.length)
      if (total > o.maxBytes) done(new UeError(o.tooLarge ?? 'UE_BODY_TOO_LARGE'))
      else done(null, chunk)
    },
  })
  // Piped, not pumped: a failure must not destroy the request, whose unread rest
  // the edge drains before it answers (destroying it would reset the client mid-send).
  const fail = (e: Error) => counted.destroy(e)
  node.stream.once('error', fail)
  node.stream.pipe(counted)
  try {
    await pump([counted, destination], signal)
  } finally {
    node.stream.unpipe(counted)
    node.stream.off('error', fail)
  }
}

/** Reads a whole (small) body into memory under a byte cap. */
export async function readBodyBytes(request: Request, maxBytes: number, timeouts: BodyTimeouts) {
  const watch = new BodyWatch(timeouts, request.signal)
  const chunks: Uint8Array[] = []
  try {
    for await (const chunk of readBody(request, { maxBytes, watch })) chunks.push(chunk)
  } finally {
    watch.stop()
  }
  return Buffer.concat(chunks)
}
