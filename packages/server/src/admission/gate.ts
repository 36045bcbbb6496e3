import type { ServerConfig } from '../config/load.js'
import { limitKey } from '../limits/client-key.js'
import { createLimiters, type Limiters } from '../limits/limiter.js'
import { UeError } from '../shared/errors.js'
import { sharedFreeBytes } from '../shared/free-space.js'
import type { Metrics, QueueOutcome, UploadLimit } from '../shared/metrics.js'

export interface UploadLimits {
  uploadsPerMinute: number
  concurrentUploads: number
  /** Uploads one client may have waiting for a slot when all of its slots are taken. */
  uploadQueue: number
  /** How long a waiting upload waits for a slot before it is refused. */
  uploadQueueWaitMs: number
  minFreeBytes: number
  /** Signed-in users the per-client limits never count (a benchmark's client); the floor still applies. */
  exemptUsers: readonly string[]
}

/** Who an upload counts against: the signed-in user when known, else the client address. */
export interface UploadClient {
  user?: string | null | undefined
  address?: string | undefined
}

/** The key an upload counts against: `user:<id>` when signed in, else the address's key. */
export const uploadClientKey: (client: UploadClient) => string | undefined = limitKey

/** Admits one upload or throws; the returned function ends it (call it exactly once). */
export interface UploadGate {
  /**
   * `clientGone` aborts a wait in the queue: the place is given up at once. `rate: false` takes
   * an in-flight slot without counting against the per-minute rate (the next request of an
   * upload already counted, such as a resumable upload's `PATCH`). `slot: false` counts against
   * the rate only (an upload whose bytes never pass through this server).
   */
  admit(
    client: UploadClient,
    clientGone?: AbortSignal,
    o?: { rate?: boolean; slot?: boolean },
  ): Promise<() => void>
}

/** What the gate reports, for the metrics. */
export interface UploadGateEvents {
  /** An upload started waiting for a slot; call the result when the wait ends. */
  queued(): (outcome: QueueOutcome) => void
  /** An upload refused by a per-client limit. */
  limited(limit: UploadLimit): void
}

/** This node's uploads of one client waiting for a slot, oldest first. */
type Waiting = (() => void)[]

const noEvents: UploadGateEvents = { queued: () => () => {}, limited() {} }

/** How long a node that stopped without ending its uploads keeps their slots counted. */
export const UPLOAD_SLOT_TTL_SECONDS = 900
/** How often a waiting upload asks again for a slot an upload on another node may have freed. */
const SHARED_RETRY_MS = 250

/**
 * Upload flood guards: a rate and an in-flight cap per user (per client address when nobody is
 * signed in), counted on every node together when the index is PostgreSQL (limits/limiter.ts),
 * and a free-space floor on the volumes uploads are written to. An upload over the in-flight
 * cap waits in a short per-client queue on its node for a slot (the editor sends every dropped
 * or pasted image at once), and is refused when the queue is full or the wait is over. An
 * anonymous request with no known address (the fetch handler used without `toNodeHandler`)
 * skips the per-client limits; the floor still applies.
 */
export function createUploadGate(
  o: UploadLimits & { volumes: readonly string[] },
  options: { limiters?: Limiters; events?: UploadGateEvents } = {},
): UploadGate {
  const limiters = options.limiters ?? createLimiters(null)
  const events = options.events ?? noEvents
  const rate =
    o.uploadsPerMinute > 0
      ? limiters.limit({ name: 'uploads', points: o.uploadsPerMinute, seconds: 60 })
      : null
  const slots =
    o.concurrentUploads > 0
      ? limiters.limit({
          name: 'upload-slots',
          points: o.concurrentUploads,
          seconds: UPLOAD_SLOT_TTL_SECONDS,
          inFlight: true,
        })
      : null
  const queues = new Map<string, Waiting>()
  const exempt = new Set(o.exemptUsers)
  const frees = [...new Set(o.volumes)].map(sharedFreeBytes)
  const belowFloor = async () => {
    for (const free of frees) if ((await free()) < o.minFreeBytes) return true
    return false
  }

  const refuse = (limit: UploadLimit, detail: string) => {
    events.limited(limit)
    return new UeError('UE_RATE_LIMITED', { detail })
  }

  const releaser = (key: string) => {
    let released = false
    return () => {
      if (released) return
      released = true
      const next = queues.get(key)?.shift()
      // The slot passes straight to the oldest upload waiting on this node, so nobody here
      // can jump the queue.
      if (next) next()
      else void slots?.give(key)
    }
  }

  /** Waits for a slot; on timeout or hang-up the place and the rate's point are given back. */
  const wait = (key: string, clientGone: AbortSignal | undefined, counted: boolean) =>
    new Promise<void>((resolve, reject) => {
      const queue = queues.get(key) ?? []
      queues.set(key, queue)
      const ended = events.queued()
      // Whoever ends the wait (a slot handed over, possibly already shifted off the queue by
      // the releaser; the deadline; a hang-up) stops the timers, so none outlives the wait.
      const leaveQueue = () => {
        clearTimeout(timer)
        clearInterval(retry)
        clientGone?.removeEventListener('abort', onGone)
        const at = queue.indexOf(handOver)
        if (at < 0) return false
        queue.splice(at, 1)
        if (queue.length === 0 && queues.get(key) === queue) queues.delete(key)
        return true
      }
      const leave = (outcome: QueueOutcome, error: UeError) => {
        if (!leaveQueue()) return
        if (counted) void rate?.give(key)
        ended(outcome)
        reject(error)
      }
      const handOver = () => {
        leaveQueue()
        ended('admitted')
        resolve()
      }
      const onGone = () =>
        leave(
          'gone',
          new UeError('UE_BODY_INVALID', { detail: 'the client closed the connection' }),
        )
      const timer = setTimeout(
        () => leave('timeout', refuse('queue_wait', 'no upload slot within the queue wait')),
        o.uploadQueueWaitMs,
      )
      // With shared counts, a slot may be freed by an upload on another node.
      const retry = limiters.shared
        ? setInterval(async () => {
            if (queue[0] !== handOver || !slots) return
            if ((await slots.take(key)) > 0) return
            if (queue[0] === handOver) handOver()
            else void slots.give(key)
          }, SHARED_RETRY_MS)
        : undefined
      queue.push(handOver)
      if (clientGone?.aborted) onGone()
      else clientGone?.addEventListener('abort', onGone, { once: true })
    })

  const take = async (
    key: string,
    clientGone: AbortSignal | undefined,
    counted: boolean,
    slot: boolean,
  ): Promise<() => void> => {
    if (counted && rate && (await rate.take(key)) > 0)
      throw refuse('per_minute', 'uploads per minute')
    if (!slot) return () => {}
    if (!slots || (await slots.take(key)) === 0) return releaser(key)
    if ((queues.get(key)?.length ?? 0) >= o.uploadQueue) {
      if (counted) void rate?.give(key)
      throw refuse('queue_full', 'concurrent uploads, and the upload queue is full')
    }
    await wait(key, clientGone, counted)
    return releaser(key)
  }

  return {
    async admit(client, clientGone, options) {
      const limited = o.uploadsPerMinute > 0 || o.concurrentUploads > 0
      const key = client.user && exempt.has(client.user) ? undefined : uploadClientKey(client)
      const counted = options?.rate !== false
      const slot = options?.slot !== false
      const release = key && limited ? await take(key, clientGone, counted, slot) : () => {}
      try {
        if (o.minFreeBytes > 0 && (await belowFloor())) throw new UeError('UE_STORAGE_FULL')
      } catch (e) {
        release()
        throw e
      }
      return release
    },
  }
}

/**
 * The server's one gate: every way of uploading (multipart, resumable, direct) counts against
 * the same per-client rate and in-flight limits.
 */
export function serverUploadGate(
  config: ServerConfig,
  metrics: Metrics,
  limiters?: Limiters,
): UploadGate {
  // The temp spool, and with local storage the root (the volumes readyz checks too).
  const volumes = [config.uploads.tempDir]
  if (config.storage.driver === 'local') volumes.push(config.storage.root)
  return createUploadGate(
    { ...config.limits, volumes },
    { limiters, events: { queued: metrics.uploadQueued, limited: metrics.uploadLimited } },
  )
}
