import { builtOf, lazyInstance, lazyPrototype, realOf } from './lazy-web-object.js'

/**
 * Fetch `Headers` for the few that most requests and answers carry: `get`, `has`, `set`,
 * `append` and `delete` work on a short list of their own, with the checks and value
 * normalisation of `Headers`; anything else (iteration, `Set-Cookie`) builds the real `Headers`
 * from the list, and from then on every call goes to it. The Node edge reads a request's
 * headers from Node's raw list and writes an answer's list as it is, so neither side builds
 * `Headers` (their argument conversion and sorted iteration are a visible part of a small
 * answer's cost).
 */
type Entry = [name: string, value: string]

const LIST = Symbol('list')
const RAW = Symbol('raw')

interface Lite {
  /** Lower-case names, combined values, in first-seen order; made from `RAW` on first use. */
  [LIST]: Entry[] | undefined
  /** Node's `rawHeaders` (name, value, name, value, …), until `LIST` is made from it. */
  [RAW]: readonly string[] | undefined
}

// RFC 9110 `token`, and the bytes a header value may not hold (after trimming).
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const NOT_A_VALUE = /[\0\r\n\u0100-\uffff]/
const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g
const isWhitespace = (code: number) => code === 32 || code === 9 || code === 10 || code === 13

function checkedName(name: string, method: string): string {
  const text = String(name)
  if (!TOKEN.test(text))
    throw new TypeError(`Headers.${method}: "${text}" is an invalid header name.`)
  return text.toLowerCase()
}

function normalisedValue(value: string, name: string, method: string): string {
  const text = String(value)
  const trimmed =
    isWhitespace(text.charCodeAt(0)) || isWhitespace(text.charCodeAt(text.length - 1))
      ? text.replace(EDGE_WHITESPACE, '')
      : text
  if (NOT_A_VALUE.test(trimmed))
    throw new TypeError(`Headers.${method}: "${text}" is an invalid header value for "${name}".`)
  return trimmed
}

function listOf(self: Lite): Entry[] {
  let list = self[LIST]
  if (list) return list
  list = []
  const raw = self[RAW] ?? []
  for (let i = 0; i + 1 < raw.length; i += 2) {
    // What `Headers` would refuse (a raw control byte let through by a lenient parser) is
    // dropped, not fatal.
    try {
      appendTo(list, checkedName(raw[i] as string, 'append'), raw[i + 1] as string, 'append')
    } catch {
      // dropped
    }
  }
  self[LIST] = list
  self[RAW] = undefined
  return list
}

function appendTo(list: Entry[], name: string, value: string, method: string): void {
  const normalised = normalisedValue(value, name, method)
  const entry = list.find((e) => e[0] === name)
  if (entry) entry[1] = `${entry[1]}, ${normalised}`
  else list.push([name, normalised])
}

const COOKIE = 'set-cookie'

/**
 * The real `Headers` once something built them; for `Set-Cookie` (whose values only the real
 * ones keep apart) they are built now.
 */
function realFor(self: Lite, key?: string): Headers | undefined {
  const headers = self as unknown as Headers
  return builtOf(headers) ?? (key === COOKIE ? realOf(headers) : undefined)
}

const prototype = lazyPrototype<Lite>(
  Headers.prototype,
  {},
  {
    get(this: Lite, name: string) {
      const real = realFor(this)
      if (real) return real.get(name)
      const key = checkedName(name, 'get')
      return listOf(this).find((e) => e[0] === key)?.[1] ?? null
    },
    has(this: Lite, name: string) {
      const real = realFor(this)
      if (real) return real.has(name)
      const key = checkedName(name, 'has')
      return listOf(this).some((e) => e[0] === key)
    },
    set(this: Lite, name: string, value: string) {
      const key = checkedName(name, 'set')
      const real = realFor(this, key)
      if (real) return real.set(name, value)
      const normalised = normalisedValue(value, key, 'set')
      const list = listOf(this)
      const entry = list.find((e) => e[0] === key)
      if (entry) entry[1] = normalised
      else list.push([key, normalised])
    },
    append(this: Lite, name: string, value: string) {
      const key = checkedName(name, 'append')
      const real = realFor(this, key)
      if (real) return real.append(name, value)
      appendTo(listOf(this), key, value, 'append')
    },
    delete(this: Lite, name: string) {
      const real = realFor(this)
      if (real) return real.delete(name)
      const key = checkedName(name, 'delete')
      const list = listOf(this)
      const at = list.findIndex((e) => e[0] === key)
      if (at >= 0) list.splice(at, 1)
    },
  },
)

function lite(fields: Lite): Headers {
  return lazyInstance(prototype, fields, () => {
    const real = new Headers()
    for (const [name, value] of listOf(fields)) real.append(name, value)
    return real
  })
}

/** Headers from a plain record (as `new Headers(record)` would make them). */
export function liteHeaders(init: Record<string, string> = {}): Headers {
  const list: Entry[] = []
  for (const name of Object.keys(init))
    appendTo(list, checkedName(name, 'append'), init[name] as string, 'append')
  return lite({ [LIST]: list, [RAW]: undefined })
}

/** A Node request's headers, read from its `rawHeaders` when first asked. */
export function rawHeaders(raw: readonly string[]): Headers {
  return lite({ [LIST]: undefined, [RAW]: raw })
}

/**
 * The names (lower case) and values of headers made here, while nothing has built the real
 * `Headers`; undefined otherwise (then iterate them as usual).
 */
export function liteEntriesOf(headers: Headers): readonly Entry[] | undefined {
  const self = headers as unknown as Partial<Lite>
  if (!(LIST in self) || builtOf(headers)) return undefined
  return listOf(self as Lite)
}
