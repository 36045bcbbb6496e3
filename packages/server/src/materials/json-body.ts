import { UeError } from '../shared/errors.js'
import { PROTOTYPE_KEYS } from '../shared/plain-object.js'
import { assertIdentityEncoding, type BodyTimeouts, readBodyBytes } from '../shared/request-body.js'

export interface JsonBodyOptions {
  maxBytes: number
  /** A body that sends nothing for this long is refused (slow-body guard). */
  timeouts: BodyTimeouts
  /** What an empty body (and no Content-Type) stands for; absent: an empty body is refused. */
  emptyAs?: unknown
}

/** Deeper JSON is refused before parsing, so no parser or validator recursion can blow up. */
const MAX_NESTING = 32

/**
 * Reads a JSON request body under a byte cap: identity encoding only, `application/json` (or
 * `+json`) in UTF-8 only, nesting capped, and prototype keys refused anywhere in the document.
 */
export async function readJsonBody(request: Request, o: JsonBodyOptions): Promise<unknown> {
  assertIdentityEncoding(request)
  const type = request.headers.get('content-type')
  if (type !== null && !isJsonType(type)) throw new UeError('UE_MEDIA_TYPE_UNSUPPORTED')
  const declared = Number(request.headers.get('content-length') ?? Number.NaN)
  if (declared > o.maxBytes) throw new UeError('UE_BODY_TOO_LARGE')

  const bytes = await readBodyBytes(request, o.maxBytes, o.timeouts)
  if (bytes.byteLength === 0) {
    if (type === null && o.emptyAs !== undefined) return o.emptyAs
    throw new UeError('UE_BODY_INVALID', { detail: 'the body is empty' })
  }
  if (type === null) throw new UeError('UE_MEDIA_TYPE_UNSUPPORTED')

  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw new UeError('UE_BODY_INVALID', { detail: 'the body is not UTF-8' })
  }
  return parseJsonSafely(text)
}

/**
 * JSON.parse that refuses documents nested deeper than 32 levels and `__proto__`,
 * `constructor` and `prototype` keys at any depth.
 */
export function parseJsonSafely(text: string): unknown {
  if (nestingOf(text) > MAX_NESTING)
    throw new UeError('UE_BODY_INVALID', { detail: `nesting deeper than ${MAX_NESTING}` })
  let forbidden: string | undefined
  let value: unknown
  try {
    value = JSON.parse(text, (key, v) => {
      if (PROTOTYPE_KEYS.has(key)) forbidden ??= key
      return v
    })
  } catch {
    throw new UeError('UE_BODY_INVALID', { detail: 'not valid JSON' })
  }
  if (forbidden !== undefined)
    throw new UeError('UE_VALIDATION_FAILED', { detail: `the key "${forbidden}" is not allowed` })
  return value
}

function isJsonType(header: string): boolean {
  const [essence = '', ...params] = header.split(';').map((p) => p.trim().toLowerCase())
  if (essence !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(essence))
    return false
  return params.every((p) => !p.startsWith('charset=') || /^charset="?utf-8"?$/.test(p))
}

/** The deepest `[`/`{` nesting outside strings. */
function nestingOf(text: string): number {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) max = Math.max(max, ++depth)
    else if (c === 0x5d || c === 0x7d) depth--
  }
  return max
}
