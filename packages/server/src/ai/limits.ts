import type { AiUsageStore } from '../db/ai-usage.js'
import { DAY_MS } from '../shared/durations.js'
import { UeError } from '../shared/errors.js'

export interface AiLimitOptions {
  /** Calls one user may start per minute (a burst of this many, refilled evenly). 0: off. */
  requestsPerMinute: number
  /** Tokens (in + out, as the upstream reports them) one user may use per UTC day. 0: off. */
  dailyTokens: number
  /** Calls in flight on this node. */
  concurrency: number
  /** Calls in flight for one user; twice this many of the user's bodies may be read at once. */
  concurrencyPerUser: number
}

interface UserState {
  tokens: number
  refilledAt: number
  active: number
  /** Bodies of this user's calls being read: they hold no call slot (docs/ai.md). */
  reading: number
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
      if (v.active === 0 && v.reading === 0) users.delete(k)
    }
  }

  const stateOf = (key: string, t: number): UserState => {
    let s = users.get(key)
    if (!s) {
      if (users.size >= MAX_TRACKED) forgetIdle()
      s = { tokens: o.requestsPerMinute, refilledAt: t, active: 0, reading: 0 }
      users.set(key, s)
    }
    s.tokens = Math.min(o.requestsPerMinute, s.tokens + (t - s.refilledAt) * perMs)
    s.refilledAt = t
    return s
  }

  const refuseOrState = (user: string): UserState => {
    const s = stateOf(user, now())
    if (o.requestsPerMinute > 0 && s.tokens < 1)
      throw new UeError('UE_AI_RATE_LIMITED', { detail: 'requests per minute' })
    if (s.active >= o.concurrencyPerUser)
      throw new UeError('UE_AI_RATE_LIMITED', { detail: 'calls in flight' })
    if (active >= o.concurrency) throw new UeError('UE_BUSY', { detail: 'AI calls in flight' })
    return s
  }

  return {
    /**
     * Throws what `admit` would throw now, taking nothing, so that a call bound to be refused
     * is refused before its body is read.
     */
    check(user: string): void {
      refuseOrState(user)
    },
    /**
     * Counts one of `user`'s bodies being read, or throws past twice `concurrencyPerUser`; the
     * returned function ends it (call it exactly once). It bounds the memory one user's slow
     * bodies take and holds nothing that other users need.
     */
    reading(user: string): () => void {
      const s = stateOf(user, now())
      if (s.reading >= 2 * o.concurrencyPerUser)
        throw new UeError('UE_AI_RATE_LIMITED', { detail: 'bodies being read' })
      s.reading++
      let ended = false
      return () => {
        if (ended) return
        ended = true
        s.reading--
      }
    },
    /**
     * Admits one call or throws; the returned function ends it (call it exactly once). Taken
     * only once the call's body is read and valid.
     */
    admit(user: string): () => void {
      const s = refuseOrState(user)
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

/** What `AiBudget.reserve` set aside for one call. */
export interface AiReservation {
  /** The output cap to send upstream: what was asked for, lowered to what is left today. */
  outputCap: number
  /** The tokens set aside: the prompt's bound plus `outputCap` (0 without a budget). */
  tokens: number
  /** Replaces the reservation by what the call used; call it once, when the call is over. */
  settle(used: number): Promise<void>
}

export interface AiBudget {
  /**
   * Sets aside `promptTokens` plus up to `outputCap` tokens against `subject`'s day, or throws
   * UE_AI_BUDGET_EXCEEDED when not even the prompt and one token of answer fit.
   */
  reserve(subject: string, promptTokens: number, outputCap: number): Promise<AiReservation>
}

// A reservation that lost a race with another call's (on any node) reads the count again.
const RESERVE_ATTEMPTS = 4

/**
 * The daily token budget (`dailyTokens` per subject per UTC day; 0: none, and nothing is
 * counted), kept in the database so that it holds across nodes and restarts. Each call first
 * reserves its prompt's bound and its output cap with a conditional update of the day's count
 * (`count + reservation <= dailyTokens`), then settles it to what it used: calls in flight on
 * every node reserve against one count, and a day's count stays within the budget unless an
 * upstream reports more than a call reserved (docs/ai.md).
 */
export function createAiBudget(
  dailyTokens: number,
  usage: AiUsageStore,
  now: () => number = Date.now,
): AiBudget {
  let prunedOn = ''
  const settle = async (subject: string, day: string, reserved: number, used: number) => {
    const change = Math.max(0, used) - reserved
    if (change !== 0) await usage.add(subject, day, change)
    if (prunedOn !== day) {
      prunedOn = day
      // Housekeeping: a failure is counted by the database metrics and tried again next time.
      await usage.forgetBefore(dayOf(now() - DAYS_KEPT * DAY_MS)).catch(() => {
        prunedOn = ''
      })
    }
  }
  return {
    async reserve(subject, promptTokens, outputCap) {
      if (dailyTokens === 0) return { outputCap, tokens: 0, settle: async () => {} }
      // The day the reservation is made on is the day the call is settled on.
      const day = dayOf(now())
      for (let attempt = 0; attempt < RESERVE_ATTEMPTS; attempt++) {
        const used = await usage.used(subject, day)
        const room = dailyTokens - used - promptTokens
        if (room < 1)
          throw new UeError('UE_AI_BUDGET_EXCEEDED', {
            detail:
              used >= dailyTokens
                ? 'daily tokens used up'
                : 'the prompt does not fit in what is left',
          })
        const cap = Math.min(outputCap, room)
        const tokens = promptTokens + cap
        if (await usage.reserve(subject, day, tokens, dailyTokens))
          return { outputCap: cap, tokens, settle: (n) => settle(subject, day, tokens, n) }
      }
      throw new UeError('UE_AI_BUDGET_EXCEEDED', { detail: 'calls in flight reserved the rest' })
    },
  }
}

function dayOf(t: number): string {
  return new Date(t).toISOString().slice(0, 10)
}
