import { UeError } from '../../shared/errors.js'

/** One call of `@uppy/aws-s3`'s Companion client, by its path under `<routes.s3>/s3/`. */
export type DirectCall =
  | { op: 'params' }
  | { op: 'create' }
  | { op: 'sign'; uploadId: string; partNumber: number }
  | { op: 'list'; uploadId: string }
  | { op: 'complete'; uploadId: string }
  | { op: 'abort'; uploadId: string }

export interface ParsedPath {
  call: DirectCall
  /**
   * A `<name>=<token>` segment in front of `s3/`: the query-token channel where Uppy can carry
   * it (it appends its own path and query to `companionEndpoint`, so a query there is lost).
   */
  pathToken?: { name: string; value: string }
}

const PART = /^[1-9][0-9]{0,4}$/
const MAX_PART = 10_000
/** S3 upload ids are opaque; they are only passed back to the bucket, never to a path. */
const UPLOAD_ID = /^[A-Za-z0-9._~+/=-]{1,1024}$/

/**
 * `rest` is the path after `<routes.s3>/`. Throws UE_NOT_FOUND for a path Uppy never calls and
 * UE_METHOD_NOT_ALLOWED (with `Allow`) for a known path with another method.
 */
export function parseDirectPath(rest: string, method: string): ParsedPath {
  const segments = rest.split('/')
  let pathToken: ParsedPath['pathToken']
  const first = segments[0] ?? ''
  const eq = first.indexOf('=')
  if (eq > 0) {
    pathToken = { name: first.slice(0, eq), value: decodeSegment(first.slice(eq + 1)) }
    segments.shift()
  }
  if (segments.shift() !== 's3') throw new UeError('UE_NOT_FOUND')
  const [head, id, tail, ...more] = segments.map(decodeSegment)
  const call = callOf(head, id, tail, more.length, method)
  return pathToken ? { call, pathToken } : { call }
}

function callOf(
  head: string | undefined,
  id: string | undefined,
  tail: string | undefined,
  extra: number,
  method: string,
): DirectCall {
  const only = (allowed: string, call: DirectCall): DirectCall => {
    if (!allowed.split(', ').includes(method))
      throw new UeError('UE_METHOD_NOT_ALLOWED', { headers: { Allow: `${allowed}, OPTIONS` } })
    return call
  }
  if (extra > 0) throw new UeError('UE_NOT_FOUND')
  if (head === 'params' && id === undefined) return only('GET', { op: 'params' })
  if (head !== 'multipart') throw new UeError('UE_NOT_FOUND')
  if (id === undefined) return only('POST', { op: 'create' })
  const uploadId = checkedUploadId(id)
  if (tail === undefined) {
    if (method === 'DELETE') return { op: 'abort', uploadId }
    return only('GET, DELETE', { op: 'list', uploadId })
  }
  if (tail === 'complete') return only('POST', { op: 'complete', uploadId })
  if (!PART.test(tail) || Number(tail) > MAX_PART)
    throw new UeError('UE_VALIDATION_FAILED', { detail: 'part numbers are 1 to 10000' })
  return only('GET', { op: 'sign', uploadId, partNumber: Number(tail) })
}

function checkedUploadId(id: string): string {
  if (!UPLOAD_ID.test(id)) throw new UeError('UE_VALIDATION_FAILED', { detail: 'upload id' })
  return id
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    throw new UeError('UE_NOT_FOUND')
  }
}
