import { clientKey } from './client-key.js'

/** Failed credentials per client address: a bucket of `perMinute`, refilled evenly. */
export interface FailureThrottle {
  /** True while the address has used up its failures; its credentials are not even checked. */
  blocked(address: string | undefined): boolean
  fail(address: string | undefined): void
}

const MAX_TRACKED = 10_000

export function failureThrottle(perMinute: number, now: () => number = Date.now): FailureThrottle {
  const buckets = new Map<string, { tokens: number; at: number }>()
  const perMs = perMinute / 60_000
  const current = (key: string) => {
    const t = now()
    const b = buckets.get(key)
    if (!b) return { tokens: perMinute, at: t }
    return { tokens: Math.min(perMinute, b.tokens + (t - b.at) * perMs), at: t }
  }
  return {
    blocked(address) {
      // No address has failed lately (the usual case): nothing to look up.
      if (perMinute === 0 || address === undefined || buckets.size === 0) return false
      return current(clientKey(address)).tokens < 1
    },
    fail(address) {
      if (perMinute === 0 || address === undefined) return
      const key = clientKey(address)
      const b = current(key)
      b.tokens = Math.max(0, b.tokens - 1)
      buckets.delete(key)
      if (buckets.size >= MAX_TRACKED) {
        // Oldest first (insertion order); a flood of addresses cannot grow the map without bound.
        const oldest = buckets.keys().next().value
        if (oldest !== undefined) buckets.delete(oldest)
      }
      buckets.set(key, b)
    },
  }
}
