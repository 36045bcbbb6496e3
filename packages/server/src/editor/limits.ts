import { statfs } from 'node:fs/promises'
import { dirname } from 'node:path'
import ipaddr from 'ipaddr.js'
import { UeError } from '../shared/errors.js'

export interface UploadLimits {
  uploadsPerMinute: number
  concurrentUploads: number
  minFreeBytes: number
}

/** Admits one upload or throws; the returned function ends it (call it exactly once). */
export interface UploadGate {
  /** `client` is a key from `clientKey` (or a user id); undefined skips the per-client limits. */
  admit(client: string | undefined): Promise<() => void>
}

interface Bucket {
  tokens: number
  updatedAt: number
  active: number
}

// Past this many tracked clients, idle ones are forgotten oldest first.
const MAX_TRACKED_CLIENTS = 10_000

/**
 * Upload flood guards (docs/security.md, row S14): a token bucket and an in-flight cap per client, and a
 * free-space floor on the storage volume. A request with no known client address (the fetch
 * handler used without `toNodeHandler`) skips the per-client limits; the floor still applies.
 */
export function createUploadGate(
  o: UploadLimits & { storageRoot: string },
  now: () => number = Date.now,
): UploadGate {
  const buckets = new Map<string, Bucket>()
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
      const release = client && limited ? take(client) : () => {}
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

/** One bucket per IPv4 address, and per /64 for IPv6 (one host usually holds a whole /64). */
export function clientKey(address: string): string {
  if (!ipaddr.isValid(address)) return address
  const ip = ipaddr.process(address)
  if (ip.kind() === 'ipv4') return ip.toString()
  return `${ip.toNormalizedString().split(':').slice(0, 4).join(':')}::/64`
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
