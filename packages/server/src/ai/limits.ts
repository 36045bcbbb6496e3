import { UeError } from '../shared/errors.js'

export interface AiLimitOptions {
  /** Calls one user may start per minute (a burst of this many, refilled evenly). 0: off. */
  requestsPerMinute: number
  /** Tokens (in + out, as the upstream reports them) one user may use per UTC day. 0: off. */
  dailyTokens: number
  /** Calls in flight on this node. */
  concurrency: number
  /** Calls in flight for one user. */
  concurrencyPerUser: number
}

interface UserState {
  tokens: number
  refilledAt: number
  active: number
  day: string
  used: number
}

// Past this many tracked users, idle ones are forgotten (their budget with them).
const MAX_TRACKED = 50_000

/**
 * Per-user rate, daily token budget and concurrency, plus a node-wide concurrency cap. All in
 * this process's memory: with several nodes, each keeps its own counts (docs/ai.md).
 */
export function createAiLimits(o: AiLimitOptions, now: () => number = Date.now) {
  const users = new Map<string, UserState>()
  let active = 0
  const perMs = o.requestsPerMinute / 60_000

  const forgetIdle = () => {
    for (const [k, v] of users) {
      if (users.size < MAX_TRACKED) return
      if (v.active === 0) users.delete(k)
    }
  }

  const stateOf = (key: string, t: number): UserState => {
    let s = users.get(key)
    if (!s) {
      if (users.size >= MAX_TRACKED) forgetIdle()
      s = { tokens: o.requestsPerMinute, refilledAt: t, active: 0, day: dayOf(t), used: 0 }
      users.set(key, s)
    }
    s.tokens = Math.min(o.requestsPerMinute, s.tokens + (t - s.refilledAt) * perMs)
    s.refilledAt = t
    const day = dayOf(t)
    if (s.day !== day) {
      s.day = day
      s.used = 0
    }
    return s
  }

  return {
    /** Admits one call or throws; the returned function ends it (call it exactly once). */
    admit(user: string): () => void {
      const s = stateOf(user, now())
      if (o.dailyTokens > 0 && s.used >= o.dailyTokens)
        throw new UeError('UE_AI_BUDGET_EXCEEDED', { detail: 'daily tokens used up' })
      if (o.requestsPerMinute > 0 && s.tokens < 1)
        throw new UeError('UE_AI_RATE_LIMITED', { detail: 'requests per minute' })
      if (s.active >= o.concurrencyPerUser)
        throw new UeError('UE_AI_RATE_LIMITED', { detail: 'calls in flight' })
      if (active >= o.concurrency) throw new UeError('UE_BUSY', { detail: 'AI calls in flight' })
      if (o.requestsPerMinute > 0) s.tokens -= 1
      s.active++
      active++
      let ended = false
      return () => {
        if (ended) return
        ended = true
        s.active--
        active--
      }
    },
    /** Counts what a finished call used against the user's day. */
    spend(user: string, tokens: number): void {
      stateOf(user, now()).used += tokens
    },
    /** Tokens the user has left today (Infinity without a budget). */
    left(user: string): number {
      if (o.dailyTokens === 0) return Number.POSITIVE_INFINITY
      return Math.max(0, o.dailyTokens - stateOf(user, now()).used)
    },
  }
}

export type AiLimits = ReturnType<typeof createAiLimits>

function dayOf(t: number): string {
  return new Date(t).toISOString().slice(0, 10)
}
