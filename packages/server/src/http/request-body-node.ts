import type { IncomingMessage } from 'node:http'
import type { NodeBody } from '../shared/request-body.js'
import type { FetchHandler } from '../shared/types.js'

/** How much of a body the handler left unread is read and thrown away before the answer. */
export interface DrainLimits {
  /** Bytes read past what the handler read; a body with more left is not drained. */
  maxBytes: number
  /** Time for the whole drain. */
  timeoutMs: number
  /** A client that sends nothing for this long is not sending the rest. */
  idleMs: number
}

/** The `http.drainMaxBytes`, `http.drainTimeoutMs` and `http.bodyIdleTimeoutMs` defaults. */
export const DEFAULT_DRAIN_LIMITS: DrainLimits = {
  maxBytes: 4_194_304,
  timeoutMs: 10_000,
  idleMs: 30_000,
}

const limitsByHandler = new WeakMap<FetchHandler, DrainLimits>()

/**
 * Marks `handler` as one of the server's own for the node bridge: it drains with `limits` (the
 * configured ones) in front of it, and it is handed the bridge's stand-in request, which only
 * the server's code reads. Every other handler gets a real `Request`.
 */
export function withDrainLimits(handler: FetchHandler, limits: DrainLimits): FetchHandler {
  limitsByHandler.set(handler, limits)
  return handler
}

export function drainLimitsOf(handler: FetchHandler): DrainLimits {
  return limitsByHandler.get(handler) ?? DEFAULT_DRAIN_LIMITS
}

/** Whether `handler` is the server's own (marked by `withDrainLimits`). */
export function isServerHandler(handler: FetchHandler): boolean {
  return limitsByHandler.has(handler)
}

/**
 * One node request body, read once: by the handler through `stream()`, then whatever it left by
 * `drain()`. A handler that stops reading (a refusal, a body over a limit) cancels its stream
 * without destroying the socket, so the bridge can still read the rest and answer readably.
 */
export class NodeRequestBody {
  private iterator: AsyncIterator<Buffer> | undefined
  private bytesRead = 0

  constructor(private readonly req: IncomingMessage) {}

  /** The body as the Node stream itself, for a Node reader; it reports what it reads. */
  take(): NodeBody {
    return {
      stream: this.req,
      read: (bytes) => {
        this.bytesRead += bytes
      },
    }
  }

  /**
   * The body as a web stream that pulls one chunk per read (back-pressure to the socket).
   * `firstRead` is called at the first read, not before, and an error it returns fails the
   * stream: the Node stream may be taken, or a host's parser read the body, in between.
   */
  stream(firstRead: () => Error | undefined): ReadableStream<Uint8Array> {
    let first = true
    return new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          if (first) {
            first = false
            const error = firstRead()
            if (error) {
              controller.error(error)
              return
            }
          }
          const next = await this.next()
          if (next.done) controller.close()
          else controller.enqueue(next.value)
        },
        // The rest stays in the socket for `drain`; destroying the request would reset it.
        cancel: () => {},
      },
      { highWaterMark: 0 },
    )
  }

  /**
   * Reads and discards the rest of the body within `limits`. True when the body ended; false
   * when more is left than the limits allow, the time is up, or the client went away: then the
   * connection must close with the answer.
   */
  async drain(limits: DrainLimits): Promise<boolean> {
    if (this.req.complete) return true
    const declared = Number(this.req.headers['content-length'])
    if (declared - this.bytesRead > limits.maxBytes) return false
    const deadline = Date.now() + limits.timeoutMs
    let drained = 0
    let timer: NodeJS.Timeout | undefined
    try {
      while (true) {
        const wait = Math.min(limits.idleMs, deadline - Date.now())
        if (wait <= 0) return false
        const next = this.next()
        // The read left pending when the time is up settles when the connection closes.
        next.catch(() => {})
        const expired = new Promise<'expired'>((resolve) => {
          timer = setTimeout(() => resolve('expired'), wait)
        })
        const result = await Promise.race([next, expired])
        clearTimeout(timer)
        if (result === 'expired') return false
        if (result.done) return true
        drained += result.value.byteLength
        if (drained > limits.maxBytes) return false
      }
    } catch {
      return false
    } finally {
      clearTimeout(timer)
    }
  }

  private async next(): Promise<IteratorResult<Buffer>> {
    // One iterator for the handler's reads and the drain; it never destroys the request.
    this.iterator ??= this.req.iterator({ destroyOnReturn: false })
    const next = await this.iterator.next()
    if (!next.done) this.bytesRead += next.value.byteLength
    return next
  }
}
