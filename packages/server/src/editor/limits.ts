import { statfs } from 'node:fs/promises'
import { dirname } from 'node:path'
import { clientKey } from '../auth/client-key.js'
import { UeError } from '../shared/errors.js'

export { clientKey }

export interface UploadLimits {
  uploadsPerMinute: number
  concurrentUploads: number
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
  admit(client: UploadClient): Promise<() => void>
}

interface Bucket {
  tokens: number
  updatedAt: number
  active: number
}

// Past this many tracked clients, idle ones are forgotten oldest first.
const MAX_TRACKED_CLIENTS = 10_000

/**
 * Upload flood guards: a token bucket and an in-flight cap per user (per client address when
 * nobody is signed in), and a free-space floor on the storage volume. An anonymous request
 * with no known address (the fetch handler used without `toNodeHandler`) skips the per-client
 * limits; the floor still applies.
 */
export function createUploadGate(
  o: UploadLimits & { storageRoot: string },
  now: () => number = Date.now,
): UploadGate {
  const buckets = new Map<string, Bucket>()
  const exempt = new Set(o.exemptUsers)
  const perMs = o.uploadsPerMinute / 60_000

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

  const take = (client: string): (() => void) => {
    const t = now()
    let b = buckets.get(client)
    if (!b) {
      if (buckets.size >= MAX_TRACKED_CLIENTS) forgetIdle(t)
      b = { tokens: o.uploadsPerMinute, updatedAt: t, active: 0 }
      buckets.set(client, b)
    }
    refill(b, t)
    if (o.uploadsPerMinute > 0 && b.tokens < 1)
      throw new UeError('UE_RATE_LIMITED', { detail: 'uploads per minute' })
    if (o.concurrentUploads > 0 && b.active >= o.concurrentUploads)
      throw new UeError('UE_RATE_LIMITED', { detail: 'concurrent uploads' })
    b.tokens -= 1
    b.active++
    const bucket = b
    let released = false
    return () => {
      if (released) return
      released = true
      bucket.active--
    }
  }

  return {
    async admit(client) {
      const limited = o.uploadsPerMinute > 0 || o.concurrentUploads > 0
      const key = client.user && exempt.has(client.user) ? undefined : uploadClientKey(client)
      const release = key && limited ? take(key) : () => {}
      try {
        if (o.minFreeBytes > 0 && (await freeBytes(o.storageRoot)) < o.minFreeBytes)
          throw new UeError('UE_STORAGE_FULL')
      } catch (e) {
        release()
        throw e
      }
      return release
    },
  }
}

/** Free bytes for unprivileged writers on the volume holding `path` (or its nearest parent). */
async function freeBytes(path: string): Promise<number> {
  for (let dir = path; ; dir = dirname(dir)) {
    try {
      const s = await statfs(dir)
      return s.bavail * s.bsize
    } catch (e) {
      const missing = (e as NodeJS.ErrnoException).code === 'ENOENT'
      if (!missing || dirname(dir) === dir) return Number.POSITIVE_INFINITY
    }
  }
}
