import type { AiUsageStore } from '../db/ai-usage.js'
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
}

// Past this many tracked users, idle ones are forgotten.
const MAX_TRACKED = 50_000

/**
 * Per-user rate and concurrency, plus a node-wide concurrency cap, in this process's memory:
 * with several nodes, each keeps its own counts (docs/ai.md). The daily budget is
 * `createAiBudget`'s, in the database.
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
      s = { tokens: o.requestsPerMinute, refilledAt: t, active: 0 }
      users.set(key, s)
    }
    s.tokens = Math.min(o.requestsPerMinute, s.tokens + (t - s.refilledAt) * perMs)
    s.refilledAt = t
    return s
  }

  return {
    /** Admits one call or throws; the returned function ends it (call it exactly once). */
    admit(user: string): () => void {
      const s = stateOf(user, now())
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
  }
}

export type AiLimits = ReturnType<typeof createAiLimits>

/** Days of counts kept; older ones are removed once a day by each node. */
const DAYS_KEPT = 31
const DAY_MS = 86_400_000

export interface AiBudget {
  /** Tokens `subject` has left today (Infinity without a budget); none left: UE_AI_BUDGET_EXCEEDED. */
  left(subject: string): Promise<number>
  /** Counts what a finished call used against `subject`'s day. */
  spend(subject: string, tokens: number): Promise<void>
}

/**
 * The daily token budget (`dailyTokens` per subject per UTC day; 0: none, and nothing is
 * counted), kept in the database so that it holds across nodes and restarts.
 */
export function createAiBudget(
  dailyTokens: number,
  usage: AiUsageStore,
  now: () => number = Date.now,
): AiBudget {
  let prunedOn = ''
  return {
    async left(subject) {
      if (dailyTokens === 0) return Number.POSITIVE_INFINITY
      const used = await usage.used(subject, dayOf(now()))
      if (used >= dailyTokens)
        throw new UeError('UE_AI_BUDGET_EXCEEDED', { detail: 'daily tokens used up' })
      return dailyTokens - used
    },
    async spend(subject, tokens) {
      if (dailyTokens === 0 || tokens <= 0) return
      const t = now()
      const day = dayOf(t)
      await usage.add(subject, day, tokens)
      if (prunedOn !== day) {
        prunedOn = day
        // Housekeeping: a failure is counted by the database metrics and tried again next time.
        await usage.forgetBefore(dayOf(t - DAYS_KEPT * DAY_MS)).catch(() => {
          prunedOn = ''
        })
      }
    },
  }
}

function dayOf(t: number): string {
  return new Date(t).toISOString().slice(0, 10)
}
