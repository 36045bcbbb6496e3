import { randomBytes } from 'node:crypto'
import { UeError } from '../shared/errors.js'
import type { StorageKey } from '../shared/types.js'

const SEGMENT = '[A-Za-z0-9][A-Za-z0-9._-]{0,127}'
const KEY_PATTERN = new RegExp(`^${SEGMENT}(/${SEGMENT}){0,7}$`)
const MAX_KEY_LENGTH = 512

/** The only producer of StorageKey: a relative path with safe segments and no '..'. */
export function toStorageKey(candidate: string): StorageKey | null {
  if (candidate.length > MAX_KEY_LENGTH || !KEY_PATTERN.test(candidate)) return null
  if (candidate.split('/').some((s) => s === '.' || s === '..' || s.includes('..'))) return null
  return candidate as StorageKey
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0')

/** N characters of [0-9a-z] from a CSPRNG (about 5.2 bits each). */
export function randomToken(length: number): string {
  const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz'
  let out = ''
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 252 = 7 * 36: rejecting larger bytes keeps the distribution uniform.
      if (byte < 252 && out.length < length) out += alphabet[byte % 36]
    }
  }
  return out
}

/**
 * Renders a path format such as `image/{yyyy}{mm}{dd}/{time}{rand:24}` and appends the
 * extension. Formats are validated at start-up; this re-checks the result anyway.
 */
export function renderKey(pathFormat: string, ext: string, now: Date = new Date()): StorageKey {
  const rendered = pathFormat.replace(
    /\{(yyyy|yy|mm|dd|hh|ii|ss|time|rand:(\d+))\}/g,
    (_, token, n) => {
      switch (token) {
        case 'yyyy':
          return String(now.getFullYear())
        case 'yy':
          return pad(now.getFullYear() % 100)
        case 'mm':
          return pad(now.getMonth() + 1)
        case 'dd':
          return pad(now.getDate())
        case 'hh':
          return pad(now.getHours())
        case 'ii':
          return pad(now.getMinutes())
        case 'ss':
          return pad(now.getSeconds())
        case 'time':
          return String(now.getTime())
        default:
          return randomToken(Number(n))
      }
    },
  )
  const key = toStorageKey(`${rendered}${ext}`)
  if (!key || !/^\.[a-z0-9]{1,10}$/.test(ext)) throw new UeError('UE_KEY_INVALID')
  return key
}
