import { hash } from 'node:crypto'
import { clientKey } from '../limits/client-key.js'
import type { Limiters } from '../limits/limiter.js'

/**
 * Failed credentials, counted so that they never cost a valid credential anything: the caller
 * checks a credential first and asks here only about failing ones.
 *
 * - Per address and credential, on this node: a credential that failed `REPEATS` times from an
 *   address lately is refused without being checked again (a client stuck on an expired JWT,
 *   or a flood of one token, costs no more verifications) until the minute is over. It saves
 *   work only, so it stays in memory: a valid credential is never held up by a database read.
 * - Per address (IPv6 per /64), on every node together: past `perMinute` failures, its failing
 *   attempts are answered UE_AUTH_THROTTLED instead of UE_UNAUTHORIZED until the minute is over.
 *
 * Memory holds a capped number of keys (limits/limiter.ts), so a flood of addresses or
 * credentials holds a bounded amount of it; a key dropped only means a repeat is checked again.
 */
export interface FailureThrottle {
  /** True while this credential (null: a malformed one) is refused unchecked from this address. */
  spent(address: string | undefined, credential: string | null): Promise<boolean>
  /** Counts a failed attempt; true when the address is past its failures (answer throttled). */
  fail(address: string | undefined, credential: string | null): Promise<boolean>
  /** Keys held in this node's memory, for tests and diagnostics. */
  tracked(): { addresses: number; credentials: number }
}

/** Failures of one credential from one address before it is refused unchecked, per minute. */
export const REPEATS = 3

export function failureThrottle(limiters: Limiters, perMinute: number): FailureThrottle {
  const addresses = limiters.limit({ name: 'auth', points: Math.max(1, perMinute), seconds: 60 })
  const credentials = limiters.local({ name: 'auth-repeat', points: REPEATS, seconds: 60 })
  const off = (address: string | undefined): address is undefined =>
    perMinute === 0 || address === undefined
  const pairKey = (address: string, credential: string | null) =>
    // The digest, not the token: memory never holds a secret, and its keys stay short.
    `${clientKey(address)} ${credential === null ? '-' : hash('sha256', credential, 'base64')}`
  return {
    async spent(address, credential) {
      // Nothing has failed lately (the usual case): no digest to take.
      if (off(address) || credentials.tracked() === 0) return false
      return credentials.spent(pairKey(address, credential))
    },
    async fail(address, credential) {
      if (off(address)) return false
      await credentials.take(pairKey(address, credential))
      return (await addresses.take(clientKey(address))) > 0
    },
    tracked: () => ({ addresses: addresses.tracked(), credentials: credentials.tracked() }),
  }
}
