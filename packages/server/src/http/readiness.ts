import { jsonResponse } from '../shared/respond.js'
import type { FetchHandler } from '../shared/types.js'

/** A part the server needs to serve; `probe` resolves when it works and rejects when not. */
export interface ReadinessCheck {
  name: 'database' | 'storage' | 'disk'
  probe(): Promise<void>
}

export interface ReadinessOptions {
  /** A result is reused this long, so a busy load balancer costs one probe round a second. */
  cacheMs?: number
  /** A probe that has not answered by then counts as failed. */
  timeoutMs?: number
}

/**
 * `GET /readyz`: 200 `{"status":"ready"}` when every part answers, else 503
 * `{"status":"not ready","failed":["database"]}`. Only the names of the parts leave the
 * server, never an error text (which could name hosts or paths). Concurrent requests share
 * one round of probes, and a round's result is cached for `cacheMs`.
 */
export function createReadiness(
  checks: readonly ReadinessCheck[],
  o: ReadinessOptions = {},
): FetchHandler {
  const cacheMs = o.cacheMs ?? 1000
  const timeoutMs = o.timeoutMs ?? 2000
  let round: Promise<string[]> | undefined
  let running = false
  let freshUntil = 0
  // A probe that outlives its timeout is not started again until it ends: probes never pile up.
  const inFlight = new Map<string, Promise<boolean>>()

  const probeOne = (c: ReadinessCheck): Promise<boolean> => {
    let pending = inFlight.get(c.name)
    if (pending === undefined) {
      pending = c
        .probe()
        .then(
          () => true,
          () => false,
        )
        .finally(() => inFlight.delete(c.name))
      inFlight.set(c.name, pending)
    }
    return within(pending, timeoutMs)
  }

  const probeAll = async (): Promise<string[]> => {
    const results = await Promise.all(
      checks.map(async (c) => ((await probeOne(c)) ? null : c.name)),
    )
    return results.filter((name) => name !== null)
  }

  return async () => {
    if (round === undefined || (!running && Date.now() >= freshUntil)) {
      running = true
      round = probeAll().finally(() => {
        running = false
        freshUntil = Date.now() + cacheMs
      })
    }
    const failed = await round
    const body = failed.length === 0 ? { status: 'ready' } : { status: 'not ready', failed }
    return jsonResponse(body, failed.length === 0 ? 200 : 503)
  }
}

/** The answer of `work`, or false when it has not come within `ms`. */
async function within(work: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms)
  })
  try {
    return await Promise.race([work, late])
  } finally {
    clearTimeout(timer)
  }
}
