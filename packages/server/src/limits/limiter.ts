import { createHash } from 'node:crypto'
import type { RateLimiterMemory } from 'rate-limiter-flexible'
import { LIMITS_TABLE } from '../db/migrations.js'

type Library = typeof import('rate-limiter-flexible')
let library: Promise<Library> | undefined
/**
 * The library loads with the first count taken (it requires every store it has, about 40 ms of
 * a start's CPU): a server that has counted nothing yet has no count to read.
 */
const loadLibrary = () => {
  library ??= import('rate-limiter-flexible')
  return library
}

/** One named limit: `points` per key, counted over a window of `seconds`. */
export interface LimitOptions {
  /** Unique per limit: it prefixes the keys of the shared table. */
  name: string
  points: number
  seconds: number
  /**
   * An in-flight count: a refused take gives its point back at once (nothing is held), and
   * `seconds` is how long the count of a node that stopped without ending its calls lasts.
   */
  inFlight?: boolean
}

export interface Limit {
  /** Takes one point; resolves 0 when taken, else the milliseconds until one may be taken. */
  take(key: string): Promise<number>
  /** Gives one point back (an in-flight call ended, or a queued one left without its slot). */
  give(key: string): Promise<void>
  /** True while `key` has no point left. */
  spent(key: string): Promise<boolean>
  /** Keys held in this node's memory, for tests and diagnostics. */
  tracked(): number
}

export interface Limiters {
  /** True when the counts are shared by every node (PostgreSQL). */
  readonly shared: boolean
  limit(o: LimitOptions): Limit
  /** A limit kept in this node's memory whatever the index (what a node alone should count). */
  local(o: LimitOptions): Limit
}

/** Keys one in-memory limit holds at most: two generations of half that each. */
export const MAX_KEYS = 20_000

/**
 * The per-client limits' counts: in this process's memory (`client` null: SQLite, or a test),
 * or in the index's `rate_limits` table through the server's own pg pool, so that every node
 * counts against one figure. A failing database falls back to this node's memory for that call.
 */
export function createLimiters(client: unknown | null, maxKeys = MAX_KEYS): Limiters {
  let sweeper = true
  const local = (o: LimitOptions) => memoryLimit(o, maxKeys)
  return {
    shared: client !== null,
    local,
    limit(o) {
      if (client === null) return local(o)
      const clearExpiredByTimeout = sweeper
      sweeper = false
      let store: Promise<Store> | undefined
      const made = () => {
        store ??= loadLibrary().then(
          ({ RateLimiterPostgres }) =>
            new RateLimiterPostgres({
              storeClient: client,
              storeType: 'pool',
              tableName: LIMITS_TABLE,
              // The table comes from the index's migrations, never from the library.
              tableCreated: true,
              // One limit removes every limit's expired rows, once an hour.
              clearExpiredByTimeout,
              keyPrefix: o.name,
              points: o.points,
              duration: o.seconds,
            }),
        )
        return store
      }
      // Made at once: the first limit's hourly sweep of expired rows starts with the node.
      made().catch(() => {})
      return storeLimit(o, made, local(o))
    },
  }
}

type Store = Pick<RateLimiterMemory, 'consume' | 'reward' | 'get' | 'delete' | 'set'>

/** Keys fit the table's column: a long one (a long user id) is stored as its digest. */
const shortKey = (key: string) =>
  key.length <= 200 ? key : `#${createHash('sha256').update(key).digest('base64')}`

function storeLimit(o: LimitOptions, made: () => Promise<Store>, fallback: Limit): Limit {
  return {
    async take(key) {
      try {
        return await takeFrom(o, await made(), shortKey(key))
      } catch {
        return fallback.take(key)
      }
    },
    async give(key) {
      await made()
        .then((store) => giveTo(store, shortKey(key)))
        .catch(() => fallback.give(key))
    },
    async spent(key) {
      try {
        const res = await (await made()).get(shortKey(key))
        return res !== null && res.consumedPoints >= o.points
      } catch {
        return fallback.spent(key)
      }
    },
    tracked: () => fallback.tracked(),
  }
}

async function takeFrom(o: LimitOptions, store: Store, key: string): Promise<number> {
  try {
    await store.consume(key)
    return 0
  } catch (e) {
    if (!(e instanceof (await loadLibrary()).RateLimiterRes)) throw e
    if (o.inFlight) await store.reward(key)
    return Math.max(1, e.msBeforeNext)
  }
}

async function giveTo(store: Store, key: string): Promise<void> {
  const res = await store.reward(key)
  // A count that expired meanwhile (its window, or an in-flight count's lifetime) restarts at
  // 0, not below: the call it counted is simply forgotten.
  if (res.consumedPoints < 0) await store.delete(key)
}

/**
 * A limit in memory for at most `maxKeys` keys: two generations of half that each, the older
 * dropped whole when the younger fills up (evicting one key at a time from a Map's front costs
 * a walk over its deleted slots, quadratic under a flood of new keys). A key in use again moves
 * to the younger generation with its count.
 */
function memoryLimit(o: LimitOptions, maxKeys: number): Limit {
  type Generation = { store: Store; keys: Set<string> }
  let generation: (() => Generation) | undefined
  let young: Generation | undefined
  let old: Generation | undefined
  const loaded = async () => {
    if (!generation) {
      const { RateLimiterMemory } = await loadLibrary()
      generation ??= () => ({
        store: new RateLimiterMemory({ points: o.points, duration: o.seconds }),
        keys: new Set<string>(),
      })
    }
    young ??= generation()
    old ??= generation()
    return { young, old, generation }
  }
  const storeOf = async (key: string): Promise<Store> => {
    const gens = await loaded()
    const { store } = gens.young
    if (gens.young.keys.has(key)) return store
    gens.young.keys.add(key)
    if (gens.old.keys.delete(key)) {
      const res = await gens.old.store.get(key)
      await gens.old.store.delete(key)
      if (res && res.msBeforeNext > 0)
        await store.set(key, res.consumedPoints, Math.ceil(res.msBeforeNext / 1000))
    }
    if (young && old && young.keys.size >= maxKeys / 2) {
      for (const k of old.keys) void old.store.delete(k)
      old = young
      young = gens.generation()
    }
    return store
  }
  const find = (key: string): Store | null =>
    young?.keys.has(key) ? young.store : old?.keys.has(key) ? old.store : null
  return {
    async take(key) {
      return takeFrom(o, await storeOf(key), key)
    },
    async give(key) {
      const store = find(key)
      if (store) await giveTo(store, key)
    },
    async spent(key) {
      const res = await find(key)?.get(key)
      return res != null && res.consumedPoints >= o.points
    },
    tracked: () => (young?.keys.size ?? 0) + (old?.keys.size ?? 0),
  }
}
