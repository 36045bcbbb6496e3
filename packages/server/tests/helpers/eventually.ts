import { inspect } from 'node:util'

export interface EventuallyOptions<T> {
  /** What is awaited, as the error names it: "the spool file removed". */
  what: string
  /** How long to keep trying before failing (default 3 s). */
  timeoutMs?: number
  /** The pause between two tries (default 25 ms). */
  intervalMs?: number
  /**
   * For a check that reads rather than asserts: whether the value read is the awaited one. A
   * read that throws then fails the wait at once, as a broken read, rather than being tried again.
   */
  until?: (value: T) => boolean
}

/**
 * Runs `check` until it passes and returns what it returned. A check passes when it neither
 * throws nor returns `false`; with `until`, when `until` accepts what it read. No try starts after
 * the deadline: then it fails, naming `what` and the last failure or value, so a wait that never
 * comes true fails well before the test's own deadline and says why. A try that started in time
 * may finish late, but one still running at twice the time fails too.
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  { what, timeoutMs = 3_000, intervalMs = 25, until }: EventuallyOptions<T>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last = 'no try finished'
  for (;;) {
    const outcome = await beforeDeadline(check, deadline + timeoutMs)
    if (outcome === TIMED_OUT)
      last = `a try still running at ${2 * timeoutMs} ms (before it: ${last})`
    else if ('error' in outcome) {
      if (until) throw outcome.error
      last = `last failure: ${messageOf(outcome.error)}`
    } else if (until ? until(outcome.value) : outcome.value !== false) return outcome.value
    else last = `last value: ${inspect(outcome.value, { depth: 4, maxStringLength: 2_000 })}`
    const left = deadline - Date.now()
    if (left <= 0) throw new Error(`not seen within ${timeoutMs} ms: ${what}; ${last}`)
    await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, left)))
  }
}

const TIMED_OUT = Symbol('timed out')

async function beforeDeadline<T>(
  check: () => T | Promise<T>,
  deadline: number,
): Promise<{ value: T } | { error: unknown } | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), Math.max(0, deadline - Date.now()))
  })
  const tried = (async () => {
    try {
      return { value: await check() }
    } catch (error) {
      return { error }
    }
  })()
  try {
    return await Promise.race([tried, late])
  } finally {
    clearTimeout(timer)
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : inspect(error)
}
