import { Metadata } from '@tus/utils'
import { UeError } from '../../shared/errors.js'

/** More than a file name, a type and a category ever need; a longer header is refused. */
const MAX_METADATA_LENGTH = 4096

/**
 * The `Upload-Metadata` header, read by the tus server's own parser (comma-separated pairs of
 * a key and its base64 value, which may be absent). Throws `UE_REQUEST_INVALID` for anything
 * else, a key given twice, or a header past 4 KiB.
 */
export function parseUploadMetadata(header: string | null): Map<string, string> {
  if (header === null || header.trim() === '') return new Map()
  if (header.length > MAX_METADATA_LENGTH)
    throw new UeError('UE_REQUEST_INVALID', { detail: 'Upload-Metadata is too long' })
  let pairs: Record<string, string | null>
  try {
    pairs = Metadata.parse(header)
  } catch {
    throw new UeError('UE_REQUEST_INVALID', { detail: 'Upload-Metadata is not valid' })
  }
  return new Map(Object.entries(pairs).map(([key, value]) => [key, value ?? '']))
}
