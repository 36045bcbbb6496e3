/** A `Content-Type` header taken apart: the lower-case `type/subtype` and its parameters. */
export interface MediaType {
  essence: string
  /** Parameter names lower-cased, values unquoted (case kept). */
  params: ReadonlyMap<string, string>
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/

/** The header's media type, or null when it is absent or not `type/subtype[; name=value]*`. */
export function parseMediaType(header: string | null): MediaType | null {
  if (header === null) return null
  const [head = '', ...rest] = header.split(';')
  const essence = head.trim().toLowerCase()
  const [type, subtype, extra] = essence.split('/')
  if (extra !== undefined || !type || !subtype || !TOKEN.test(type) || !TOKEN.test(subtype))
    return null
  const params = new Map<string, string>()
  for (const part of rest) {
    if (part.trim() === '') continue
    const eq = part.indexOf('=')
    if (eq < 0) return null
    const name = part.slice(0, eq).trim().toLowerCase()
    let value = part.slice(eq + 1).trim()
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"'))
      value = value.slice(1, -1)
    if (!TOKEN.test(name)) return null
    if (!params.has(name)) params.set(name, value)
  }
  return { essence, params }
}

/** `application/json` or a `+json` type such as `application/vnd.api+json`. */
export function isJsonMediaType(type: MediaType): boolean {
  return type.essence === 'application/json' || /^application\/[^/]+\+json$/.test(type.essence)
}

/** No charset, or UTF-8: the only text encoding the server reads. */
export function isUtf8(type: MediaType): boolean {
  const charset = type.params.get('charset')
  return charset === undefined || charset.toLowerCase() === 'utf-8'
}
