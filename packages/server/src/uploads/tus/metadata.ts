import { UeError } from '../../shared/errors.js'

/** More than a file name, a type and a category ever need; a longer header is refused. */
const MAX_METADATA_LENGTH = 4096
const KEY = /^[\x21-\x2b\x2d-\x7e]+$/
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/**
 * The `Upload-Metadata` header: comma-separated pairs of a key and its base64 value (the value
 * may be absent). Throws `UE_REQUEST_INVALID` for anything else, or a key given twice.
 */
export function parseUploadMetadata(header: string | null): Map<string, string> {
  const out = new Map<string, string>()
  if (header === null || header.trim() === '') return out
  if (header.length > MAX_METADATA_LENGTH)
    throw new UeError('UE_REQUEST_INVALID', { detail: 'Upload-Metadata is too long' })
  for (const pair of header.split(',')) {
    const [key = '', value = '', ...rest] = pair.trim().split(' ')
    if (!KEY.test(key) || rest.length > 0 || !BASE64.test(value) || out.has(key))
      throw new UeError('UE_REQUEST_INVALID', { detail: 'Upload-Metadata is not valid' })
    out.set(key, Buffer.from(value, 'base64').toString('utf8'))
  }
  return out
}
