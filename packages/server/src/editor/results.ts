import type { FileEntry } from '../db/types.js'

export interface UploadResult {
  state: 'SUCCESS'
  url: string
  title: string
  original: string
  type: string
  size: number
}

export interface ListEntry {
  url: string
  mtime: number
  original: string
}

/** The public URL of a stored key; keys hold only URL-safe characters. */
export function publicUrlOf(publicUrl: string, key: string): string {
  return `${publicUrl}${publicUrl.endsWith('/') ? '' : '/'}${key}`
}

export function uploadResult(publicUrl: string, entry: FileEntry): UploadResult {
  return {
    state: 'SUCCESS',
    url: publicUrlOf(publicUrl, entry.key),
    title: entry.key.slice(entry.key.lastIndexOf('/') + 1),
    original: entry.originalName,
    type: entry.ext,
    size: entry.size,
  }
}

export function listEntry(publicUrl: string, entry: FileEntry): ListEntry {
  return {
    url: publicUrlOf(publicUrl, entry.key),
    mtime: Math.floor(entry.createdAt / 1000),
    original: entry.originalName,
  }
}
