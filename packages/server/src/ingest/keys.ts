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

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz'

/** N characters of [0-9a-z] from a CSPRNG (about 5.2 bits each). */
export function randomToken(length: number): string {
  let out = ''
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 252 = 7 * 36: rejecting larger bytes keeps the distribution uniform.
      if (byte < 252 && out.length < length) out += ALPHABET[byte % 36]
    }
  }
  return out
}

interface Placeholder {
  render(now: Date, n: number): string
  pattern(n: number): string
}

/**
 * Every placeholder of a path format: how a key is rendered from it, and the exact pattern of
 * what that rendering can give. `renderKey` and `keyRecogniser` both read this one table, so
 * the keys the server recognises as its own are the keys it can produce.
 */
const PLACEHOLDERS: Record<string, Placeholder> = {
  yyyy: { render: (now) => String(now.getFullYear()), pattern: () => '[0-9]{4}' },
  yy: { render: (now) => pad(now.getFullYear() % 100), pattern: () => '[0-9]{2}' },
  mm: { render: (now) => pad(now.getMonth() + 1), pattern: () => '(?:0[1-9]|1[0-2])' },
  dd: { render: (now) => pad(now.getDate()), pattern: () => '(?:0[1-9]|[12][0-9]|3[01])' },
  hh: { render: (now) => pad(now.getHours()), pattern: () => '(?:[01][0-9]|2[0-3])' },
  ii: { render: (now) => pad(now.getMinutes()), pattern: () => '[0-5][0-9]' },
  ss: { render: (now) => pad(now.getSeconds()), pattern: () => '[0-5][0-9]' },
  // Milliseconds have 13 digits from September 2001 until the year 2286.
  time: { render: (now) => String(now.getTime()), pattern: () => '[1-9][0-9]{12}' },
  rand: { render: (_, n) => randomToken(n), pattern: (n) => `[${ALPHABET}]{${n}}` },
}

const PLACEHOLDER = /\{(?:(yyyy|yy|mm|dd|hh|ii|ss|time)|rand:(\d+))\}/g

/** The placeholder a match of PLACEHOLDER names, with its length for `{rand:N}`. */
function placeholderOf(m: RegExpMatchArray) {
  const [, name, n] = m
  return { placeholder: PLACEHOLDERS[name ?? 'rand'] as Placeholder, n: Number(n) }
}

/** The extension every key ends with: dotted, lower-case letters and digits. */
const EXTENSION = '\\.[a-z0-9]{1,10}'
const EXTENSION_PATTERN = new RegExp(`^${EXTENSION}$`)

/**
 * Renders a path format such as `image/{yyyy}{mm}{dd}/{time}{rand:24}` and appends the
 * extension. Formats are validated at start-up; this re-checks the result anyway.
 */
export function renderKey(pathFormat: string, ext: string, now: Date = new Date()): StorageKey {
  let rendered = ''
  let last = 0
  for (const m of pathFormat.matchAll(PLACEHOLDER)) {
    const { placeholder, n } = placeholderOf(m)
    rendered += pathFormat.slice(last, m.index) + placeholder.render(now, n)
    last = m.index + m[0].length
  }
  rendered += pathFormat.slice(last)
  const key = toStorageKey(`${rendered}${ext}`)
  if (!key || !EXTENSION_PATTERN.test(ext)) throw new UeError('UE_KEY_INVALID')
  return key
}

/**
 * A test for "could this server have given this key?": true only for keys that one of the path
 * formats renders, with an extension, exactly (a legacy backend's `{time}{rand:6}` name, a
 * hand-placed `notes.txt` or another application's prefix is not one).
 */
export function keyRecogniser(pathFormats: readonly string[]): (key: string) => StorageKey | null {
  const patterns = [...new Set(pathFormats)].map(
    (format) => new RegExp(`^${formatPattern(format)}${EXTENSION}$`),
  )
  return (key) => {
    const valid = toStorageKey(key)
    return valid !== null && patterns.some((p) => p.test(valid)) ? valid : null
  }
}

/** The pattern of what `renderKey` renders from one format (without the extension). */
function formatPattern(format: string): string {
  let out = ''
  let last = 0
  for (const m of format.matchAll(PLACEHOLDER)) {
    const { placeholder, n } = placeholderOf(m)
    out += escapeRegExp(format.slice(last, m.index)) + placeholder.pattern(n)
    last = m.index + m[0].length
  }
  return out + escapeRegExp(format.slice(last))
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
