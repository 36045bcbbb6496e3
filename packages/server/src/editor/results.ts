import type { ListedFile } from '../db/types.js'
import { publicUrlOf } from '../shared/public-url.js'

export interface ListEntry {
  url: string
  mtime: number
  original: string
}

export function listEntry(publicUrl: string, entry: ListedFile): ListEntry {
  return {
    url: publicUrlOf(publicUrl, entry.key),
    mtime: Math.floor(entry.createdAt / 1000),
    original: entry.originalName,
  }
}
