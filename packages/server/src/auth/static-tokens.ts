import { hash, timingSafeEqual } from 'node:crypto'
import type { Grant } from './types.js'

export interface TokenEntry {
  token: string
  grant: Grant
}

/**
 * Opaque tokens compared as SHA-256 digests with `timingSafeEqual`, against every entry, so
 * neither the length nor the position of a match leaks through timing.
 */
export function tokenTable(entries: readonly TokenEntry[]): (token: string) => Grant | null {
  // No table (the usual surface without tokens of its own): nothing to hash against.
  if (entries.length === 0) return () => null
  const table = entries.map((e) => ({ digest: digest(e.token), grant: e.grant }))
  return (token) => {
    const presented = digest(token)
    let found: Grant | null = null
    for (const e of table) {
      if (timingSafeEqual(presented, e.digest) && (found === null || e.grant.admin)) found = e.grant
    }
    return found
  }
}

/** `alice:token` entries (the first `:` separates the user); admins listed by user id. */
export function userTokens(list: readonly string[], adminUsers: readonly string[]): TokenEntry[] {
  const admins = new Set(adminUsers)
  return list.map((entry) => {
    const at = entry.indexOf(':')
    const user = entry.slice(0, at)
    return { token: entry.slice(at + 1), grant: { user, admin: admins.has(user) } }
  })
}

function digest(token: string): Buffer {
  // The one-shot hash: no Hash object per request.
  return hash('sha256', token, 'buffer')
}
