import type { FileEntry } from '../db/types.js'
import { publicUrlOf } from '../shared/public-url.js'
import type { UploadResult } from '../shared/types.js'

export type { UploadResult }

/** The fields the upload and catch answers share for a stored file. */
export function storedFields(publicUrl: string, entry: FileEntry) {
  return {
    url: publicUrlOf(publicUrl, entry.key),
    title: entry.key.slice(entry.key.lastIndexOf('/') + 1),
    original: entry.originalName,
    size: entry.size,
  }
}

/** The editor's answer for a stored file, whichever way it came. */
export function uploadResult(publicUrl: string, entry: FileEntry): UploadResult {
  return { state: 'SUCCESS', ...storedFields(publicUrl, entry), type: entry.ext }
}
