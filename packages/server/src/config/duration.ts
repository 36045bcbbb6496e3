import { DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS } from '../shared/durations.js'

/** What a duration setting accepts, for the message that refuses a bad one. */
export const DURATION_FORMS =
  'must be a duration: a number of seconds (3600) or a number and a unit: 30m, 12h, 7d (s, m, h, d)'

const DURATION = /^(\d{1,9})\s*([smhd]?)$/i

const UNIT_MS: Readonly<Record<string, number>> = {
  '': SECOND_MS,
  s: SECOND_MS,
  m: MINUTE_MS,
  h: HOUR_MS,
  d: DAY_MS,
}

/** Milliseconds from `7d`, `12h`, `30m`, `90s` or `3600` (seconds); undefined for anything else. */
export function parseDuration(value: string): number | undefined {
  const m = DURATION.exec(value.trim())
  if (!m) return undefined
  return Number(m[1]) * (UNIT_MS[(m[2] ?? '').toLowerCase()] as number)
}

/** True for a text `parseDuration` reads. */
export function isDuration(value: string): boolean {
  return parseDuration(value) !== undefined
}
