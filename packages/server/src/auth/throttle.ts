import { hash } from 'node:crypto'
import { clientKey } from './client-key.js'

/**
 * Failed credentials, counted so that they never cost a valid credential anything: the caller
 * checks a credential first and asks here only about failing ones.
 *
 * - Per address and credential: a credential that failed `REPEATS` times from an address
 *   lately is refused without being checked again (a client stuck on an expired JWT, or a
 *   flood of one token, costs no more verifications), until its bucket refills.
 * - Per address (IPv6 per /64): past `perMinute` failures, its failing attempts are answered
 *   UE_AUTH_THROTTLED instead of UE_UNAUTHORIZED until the bucket refills.
 *
 * Both keep a capped number of recently failed keys, so a flood of addresses or credentials
 * holds a bounded amount of memory; an entry dropped only means a repeat is checked once more.
 */
export interface FailureThrottle {
  /** True while this credential (null: a malformed one) is refused unchecked from this address. */
  spent(address: string | undefined, credential: string | null): boolean
  /** Counts a failed attempt; true when the address is past its failures (answer throttled). */
  fail(address: string | undefined, credential: string | null): boolean
  /** Entries held, for tests and diagnostics. */
  tracked(): { addresses: number; credentials: number }
}

/** Failures of one credential from one address before it is refused unchecked, per minute. */
export const REPEATS = 3
const MAX_ADDRESSES = 10_000
const MAX_CREDENTIALS = 20_000

export function failureThrottle(perMinute: number, now: () => number = Date.now): FailureThrottle {
  const addresses = buckets(perMinute, MAX_ADDRESSES, now)
  const credentials = buckets(REPEATS, MAX_CREDENTIALS, now)
  const off = (address: string | undefined): address is undefined =>
    perMinute === 0 || address === undefined
  const pairKey = (address: string, credential: string | null) =>
    // The digest, not the token: the map never holds a secret, and its keys stay short.
    `${clientKey(address)} ${credential === null ? '-' : hash('sha256', credential, 'base64')}`
  return {
    spent(address, credential) {
      // Nothing has failed lately (the usual case): no digest to take.
      if (off(address) || credentials.size() === 0) return false
      return credentials.empty(pairKey(address, credential))
    },
    fail(address, credential) {
      if (off(address)) return false
      credentials.spend(pairKey(address, credential))
      return !addresses.spend(clientKey(address))
    },
    tracked: () => ({ addresses: addresses.size(), credentials: credentials.size() }),
  }
}

/**
 * Token buckets of `capacity`, refilled evenly over a minute, for at most `max` keys: two
 * generations of half that each, the older dropped whole when the younger fills up. (Evicting
 * one key at a time from a Map's front costs a walk over its deleted slots, quadratic under a
 * flood of new keys.) A key in use again moves to the younger generation.
 */
function buckets(capacity: number, max: number, now: () => number) {
  let young = new Map<string, { tokens: number; at: number }>()
  let old = new Map<string, { tokens: number; at: number }>()
  const perMs = capacity / 60_000
  const current = (key: string) => {
    const t = now()
    const b = young.get(key) ?? old.get(key)
    if (!b) return { tokens: capacity, at: t }
    return { tokens: Math.min(capacity, b.tokens + (t - b.at) * perMs), at: t }
  }
  return {
    size: () => young.size + old.size,
    empty: (key: string) => (young.has(key) || old.has(key)) && current(key).tokens < 1,
    /** Takes one token; false when there was none left. */
    spend(key: string): boolean {
      const b = current(key)
      const had = b.tokens >= 1
      b.tokens = Math.max(0, b.tokens - 1)
      old.delete(key)
      young.set(key, b)
      if (young.size >= max / 2) {
        old = young
        young = new Map()
      }
      return had
    },
  }
}
