import { clientKey } from '../auth/client-key.js'
import type { ServerConfig } from '../config/load.js'
import { UeError } from '../shared/errors.js'
import { sharedFreeBytes } from '../shared/free-space.js'
import type { Metrics, QueueOutcome, UploadLimit } from '../shared/metrics.js'

export { clientKey }

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
export function uploadClientKey(client: UploadClient): string | undefined {
  if (client.user) return `user:${client.user}`
  return client.address ? clientKey(client.address) : undefined
}

/** Admits one upload or throws; the returned function ends it (call it exactly once). */
export interface UploadGate {
  /**
   * `clientGone` aborts a wait in the queue: the place is given up at once. `rate: false` takes
   * an in-flight slot without counting against the per-minute rate (the next request of an
   * upload already counted, such as a resumable upload's `PATCH`).
   */
  admit(client: UploadClient, clientGone?: AbortSignal, o?: { rate?: boolean }): Promise<() => void>
}

/** What the gate reports, for the metrics. */
export interface UploadGateEvents {
  /** An upload started waiting for a slot; call the result when the wait ends. */
  queued(): (outcome: QueueOutcome) => void
  /** An upload refused by a per-client limit. */
  limited(limit: UploadLimit): void
}

interface Bucket {
  tokens: number
  updatedAt: number
  active: number
  /** Uploads waiting for a slot, oldest first: each takes the slot it is handed. */
  waiting: (() => void)[]
}

const noEvents: UploadGateEvents = { queued: () => () => {}, limited() {} }

// Past this many tracked clients, idle ones are forgotten oldest first.
const MAX_TRACKED_CLIENTS = 10_000

/**
 * Upload flood guards: a token bucket and an in-flight cap per user (per client address when
 * nobody is signed in), and a free-space floor on the volumes uploads are written to. An
 * upload over the in-flight cap waits in a short per-client queue for a slot (the editor sends
 * every dropped or pasted image at once), and is refused when the queue is full or the wait is
 * over. An anonymous request with no known address (the fetch handler used without
 * `toNodeHandler`) skips the per-client limits; the floor still applies.
 */
export function createUploadGate(
  o: UploadLimits & { volumes: readonly string[] },
  options: { now?: () => number; events?: UploadGateEvents } = {},
): UploadGate {
  const now = options.now ?? Date.now
  const events = options.events ?? noEvents
  const buckets = new Map<string, Bucket>()
  const exempt = new Set(o.exemptUsers)
  const perMs = o.uploadsPerMinute / 60_000
  const frees = [...new Set(o.volumes)].map(sharedFreeBytes)
  const belowFloor = async () => {
    for (const free of frees) if ((await free()) < o.minFreeBytes) return true
    return false
  }

  const refill = (b: Bucket, t: number) => {
    b.tokens = Math.min(o.uploadsPerMinute, b.tokens + (t - b.updatedAt) * perMs)
    b.updatedAt = t
  }

  const forgetIdle = (t: number) => {
    for (const [key, b] of buckets) {
      if (buckets.size < MAX_TRACKED_CLIENTS) return
      refill(b, t)
      if (b.active === 0) buckets.delete(key)
    }
  }

  const refuse = (limit: UploadLimit, detail: string) => {
    events.limited(limit)
    return new UeError('UE_RATE_LIMITED', { detail })
  }

  const releaser = (b: Bucket) => {
    let released = false
    return () => {
      if (released) return
      released = true
      const next = b.waiting.shift()
      // The slot passes straight to the oldest waiting upload, so nobody can jump the queue.
      if (next) next()
      else b.active--
    }
  }

  /** Waits for a slot of `b`; on timeout or hang-up the place and the token are given back. */
  const wait = (b: Bucket, clientGone: AbortSignal | undefined, counted: boolean) =>
    new Promise<void>((resolve, reject) => {
      const ended = events.queued()
      const leave = (outcome: QueueOutcome, error: UeError) => {
        const at = b.waiting.indexOf(handOver)
        if (at < 0) return
        b.waiting.splice(at, 1)
        clearTimeout(timer)
        clientGone?.removeEventListener('abort', onGone)
        if (counted) b.tokens = Math.min(o.uploadsPerMinute, b.tokens + 1)
        ended(outcome)
        reject(error)
      }
      const handOver = () => {
        clearTimeout(timer)
        clientGone?.removeEventListener('abort', onGone)
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
      b.waiting.push(handOver)
      if (clientGone?.aborted) onGone()
      else clientGone?.addEventListener('abort', onGone, { once: true })
    })

  const take = async (
    client: string,
    clientGone: AbortSignal | undefined,
    counted: boolean,
  ): Promise<() => void> => {
    const t = now()
    let b = buckets.get(client)
    if (!b) {
      if (buckets.size >= MAX_TRACKED_CLIENTS) forgetIdle(t)
      b = { tokens: o.uploadsPerMinute, updatedAt: t, active: 0, waiting: [] }
      buckets.set(client, b)
    }
    refill(b, t)
    if (counted && o.uploadsPerMinute > 0 && b.tokens < 1)
      throw refuse('per_minute', 'uploads per minute')
    const full = o.concurrentUploads > 0 && b.active >= o.concurrentUploads
    if (full && b.waiting.length >= o.uploadQueue)
      throw refuse('queue_full', 'concurrent uploads, and the upload queue is full')
    if (counted) b.tokens -= 1
    if (full) await wait(b, clientGone, counted)
    else b.active++
    return releaser(b)
  }

  return {
    async admit(client, clientGone, options) {
      const limited = o.uploadsPerMinute > 0 || o.concurrentUploads > 0
      const key = client.user && exempt.has(client.user) ? undefined : uploadClientKey(client)
      const counted = options?.rate !== false
      const release = key && limited ? await take(key, clientGone, counted) : () => {}
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
export function serverUploadGate(config: ServerConfig, metrics: Metrics): UploadGate {
  // The temp spool, and with local storage the root (the volumes readyz checks too).
  const volumes = [config.uploads.tempDir]
  if (config.storage.driver === 'local') volumes.push(config.storage.root)
  return createUploadGate(
    { ...config.limits, volumes },
    { events: { queued: metrics.uploadQueued, limited: metrics.uploadLimited } },
  )
}
