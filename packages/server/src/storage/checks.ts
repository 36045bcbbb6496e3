import { UeError } from '../shared/errors.js'
import type { StorageKey } from '../shared/types.js'

/**
 * Keys were validated by `ingest/keys.ts` before they reach a driver; this is defence in depth,
 * so no key can name a place outside the store: a relative path of non-empty segments, none of
 * them `.` or `..`, with no `..`, backslash or NUL anywhere.
 */
export function checkedKey(key: StorageKey): string {
  if (
    typeof key !== 'string' ||
    key === '' ||
    key.includes('\0') ||
    key.includes('..') ||
    key.includes('\\') ||
    key.startsWith('/') ||
    key.split('/').some((part) => part === '' || part === '.')
  ) {
    throw new UeError('UE_KEY_INVALID')
  }
  return key
}

/** An inclusive byte range of whole, non-negative numbers, `start` not past `end`. */
export function checkRange(range: { start: number; end: number } | undefined): void {
  if (
    range &&
    !(
      Number.isSafeInteger(range.start) &&
      Number.isSafeInteger(range.end) &&
      range.start >= 0 &&
      range.end >= range.start
    )
  )
    throw new RangeError('invalid byte range')
}
