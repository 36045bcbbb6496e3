export interface ClientRate {
  /** Takes one render from `client`'s bucket; false when it is empty. */
  take(client: string): boolean
}

interface Bucket {
  tokens: number
  updatedAt: number
}

// Past this many tracked clients, the one seen longest ago is forgotten.
const MAX_TRACKED_CLIENTS = 10_000

/** A token bucket per client: a burst of `perMinute` renders, refilled evenly. 0: no limit. */
export function createClientRate(perMinute: number, now: () => number = Date.now): ClientRate {
  const buckets = new Map<string, Bucket>()
  const perMs = perMinute / 60_000
  return {
    take(client) {
      if (perMinute === 0) return true
      const t = now()
      const b = buckets.get(client) ?? { tokens: perMinute, updatedAt: t }
      // Re-inserted on every use, so the map's first entry is the client seen longest ago.
      buckets.delete(client)
      if (buckets.size >= MAX_TRACKED_CLIENTS) buckets.delete(buckets.keys().next().value as string)
      buckets.set(client, b)
      b.tokens = Math.min(perMinute, b.tokens + (t - b.updatedAt) * perMs)
      b.updatedAt = t
      if (b.tokens < 1) return false
      b.tokens -= 1
      return true
    },
  }
}
