import { UeError } from './errors.js'
import { isJsonMediaType, isUtf8, parseMediaType } from './media-type.js'
import { isPlainObject, PROTOTYPE_KEYS } from './plain-object.js'
import { assertIdentityEncoding, type BodyTimeouts, readBodyBytes } from './request-body.js'

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
 * The one way a JSON request body is read, with one code per fault on every route:
 * a compressed body UE_BODY_ENCODING; a type other than `application/json` or `+json`, or a
 * charset other than UTF-8, UE_MEDIA_TYPE_UNSUPPORTED; past the byte cap UE_BODY_TOO_LARGE;
 * empty, not UTF-8, not JSON or nested too deeply UE_BODY_INVALID; a prototype key, or not an
 * object where one is wanted, UE_VALIDATION_FAILED.
 */
export async function readJsonBody(request: Request, o: JsonBodyOptions): Promise<unknown> {
  assertIdentityEncoding(request)
  const header = request.headers.get('content-type')
  if (header !== null && !isUtf8JsonType(header)) throw new UeError('UE_MEDIA_TYPE_UNSUPPORTED')
  const bytes = await readSmallBody(request, o.maxBytes, o.timeouts)
  if (bytes.byteLength === 0 && header === null && o.emptyAs !== undefined) return o.emptyAs
  if (header === null && bytes.byteLength > 0) throw new UeError('UE_MEDIA_TYPE_UNSUPPORTED')
  return jsonOfBytes(bytes)
}

/** `readJsonBody` for a route that wants a JSON object. */
export async function readJsonObject(
  request: Request,
  o: JsonBodyOptions,
): Promise<Record<string, unknown>> {
  return objectOf(await readJsonBody(request, o))
}

/** The value when it is a JSON object, else UE_VALIDATION_FAILED. */
export function objectOf(value: unknown): Record<string, unknown> {
  if (!isPlainObject(value))
    throw new UeError('UE_VALIDATION_FAILED', { detail: 'the body must be a JSON object' })
  return value
}

/** Whether a Content-Type header names JSON in UTF-8 (or with no charset). */
export function isUtf8JsonType(header: string | null): boolean {
  const type = parseMediaType(header)
  return type !== null && isJsonMediaType(type) && isUtf8(type)
}

/**
 * A whole (small) body under a byte cap, refused before reading when its declared length is
 * already past it. The caller checks the encoding and type first.
 */
export async function readSmallBody(
  request: Request,
  maxBytes: number,
  timeouts: BodyTimeouts,
): Promise<Buffer> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN)
  if (declared > maxBytes) throw new UeError('UE_BODY_TOO_LARGE')
  return readBodyBytes(request, maxBytes, timeouts)
}

/** The JSON of a body's bytes: UTF-8 strictly (a BOM is dropped), then `parseJsonSafely`. */
export function jsonOfBytes(bytes: Uint8Array): unknown {
  if (bytes.byteLength === 0) throw new UeError('UE_BODY_INVALID', { detail: 'the body is empty' })
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
