import type { FileEntry, ListedFile } from '../db/types.js'
import { publicUrlOf } from '../shared/public-url.js'

import type { UploadResult } from '../shared/types.js'

export type { UploadResult }

export interface ListEntry {
  url: string
  mtime: number
  original: string
}

/** The fields the upload and catch answers share for a stored file. */
export function storedFields(publicUrl: string, entry: FileEntry) {
  return {
    url: publicUrlOf(publicUrl, entry.key),
    title: entry.key.slice(entry.key.lastIndexOf('/') + 1),
    original: entry.originalName,
    size: entry.size,
  }
}

export function uploadResult(publicUrl: string, entry: FileEntry): UploadResult {
  return { state: 'SUCCESS', ...storedFields(publicUrl, entry), type: entry.ext }
}

export function listEntry(publicUrl: string, entry: ListedFile): ListEntry {
  return {
    url: publicUrlOf(publicUrl, entry.key),
    mtime: Math.floor(entry.createdAt / 1000),
    original: entry.originalName,
  }
}
