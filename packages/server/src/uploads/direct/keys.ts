import { randomBytes } from 'node:crypto'
import type { StorageKey } from '../../shared/types.js'

/**
 * Where direct uploads wait in the bucket until they end: a key prefix whose name starts with a
 * dot, which no storage key and no path of the files route can name, so bytes nobody checked
 * yet are never served as a stored file.
 */
export const DIRECT_FOLDER = '.direct'

const DIRECT_KEY = /^\.direct\/([A-Za-z0-9_-]{22})$/

/** A new upload id: 128 random bits, base64url. */
export function newDirectId(): string {
  return randomBytes(16).toString('base64url')
}

/** The pending key of the upload `id`: the server's, never the client's. */
export function pendingKeyOf(id: string): StorageKey {
  return `${DIRECT_FOLDER}/${id}` as StorageKey
}

/** The ledger id of a pending object (a key as `storage.list()` yields it), else null. */
export function directIdOfKey(key: string): string | null {
  return DIRECT_KEY.exec(key)?.[1] ?? null
}

/**
 * What a ledger row records of where its bytes go: the pending key, and after `#` the one
 * multipart upload the server started for it (a simple upload has none). `#` is in neither.
 */
export function pendingRefOf(key: StorageKey, uploadId?: string): string {
  return uploadId === undefined ? key : `${key}#${uploadId}`
}

export function parsePendingRef(ref: string): { key: StorageKey; uploadId: string | null } {
  const hash = ref.indexOf('#')
  if (hash < 0) return { key: ref as StorageKey, uploadId: null }
  return { key: ref.slice(0, hash) as StorageKey, uploadId: ref.slice(hash + 1) }
}
