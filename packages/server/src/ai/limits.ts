import type { AiUsageStore } from '../db/ai-usage.js'
import type { Limiters } from '../limits/limiter.js'
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

interface NodeState {
  /** Calls in flight on this node. */
  active: number
  /** Bodies being read on this node, per user: they hold no call slot (docs/ai.md). */
  reading: Map<string, number>
}

/** How long a node that stopped without ending its calls keeps their slots counted. */
export const AI_SLOT_TTL_SECONDS = 600

/**
 * Per-user rate and calls in flight, counted on every node together when the index is
 * PostgreSQL (limits/limiter.ts), plus this node's own cap on calls in flight and on bodies
 * being read (what this node's memory and sockets hold). The daily budget is `createAiBudget`'s,
 * in the database.
 */
export function createAiLimits(limiters: Limiters, o: AiLimitOptions) {
  const rate =
    o.requestsPerMinute > 0
      ? limiters.limit({ name: 'ai', points: o.requestsPerMinute, seconds: 60 })
      : null
  const calls = limiters.limit({
    name: 'ai-calls',
    points: Math.max(1, o.concurrencyPerUser),
    seconds: AI_SLOT_TTL_SECONDS,
    inFlight: true,
  })
  const node: NodeState = { active: 0, reading: new Map() }
  const perMinute = () => new UeError('UE_AI_RATE_LIMITED', { detail: 'requests per minute' })
  const inFlight = () => new UeError('UE_AI_RATE_LIMITED', { detail: 'calls in flight' })
  const busy = () => new UeError('UE_BUSY', { detail: 'AI calls in flight' })

  return {
    /**
     * Throws what `admit` would throw now, taking nothing, so that a call bound to be refused
     * is refused before its body is read.
     */
    async check(user: string): Promise<void> {
      if (rate && (await rate.spent(user))) throw perMinute()
      if (o.concurrencyPerUser <= 0 || (await calls.spent(user))) throw inFlight()
      if (node.active >= o.concurrency) throw busy()
    },
    /**
     * Counts one of `user`'s bodies being read on this node, or throws past twice
     * `concurrencyPerUser`; the returned function ends it (call it exactly once). It bounds the
     * memory one user's slow bodies take and holds nothing that other users need.
     */
    reading(user: string): () => void {
      const n = node.reading.get(user) ?? 0
      if (n >= 2 * o.concurrencyPerUser)
        throw new UeError('UE_AI_RATE_LIMITED', { detail: 'bodies being read' })
      node.reading.set(user, n + 1)
      let ended = false
      return () => {
        if (ended) return
        ended = true
        const left = (node.reading.get(user) ?? 1) - 1
        if (left > 0) node.reading.set(user, left)
        else node.reading.delete(user)
      }
    },
    /**
     * Admits one call or throws; the returned function ends it (call it exactly once). Taken
     * only once the call's body is read and valid.
     */
    async admit(user: string): Promise<() => void> {
      if (rate && (await rate.take(user)) > 0) throw perMinute()
      if (o.concurrencyPerUser <= 0 || (await calls.take(user)) > 0) {
        await rate?.give(user)
        throw inFlight()
      }
      if (node.active >= o.concurrency) {
        await Promise.all([calls.give(user), rate?.give(user)])
        throw busy()
      }
      node.active++
      let ended = false
      return () => {
        if (ended) return
        ended = true
        node.active--
        void calls.give(user)
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
