import type { StorageKey } from '../../shared/types.js'

/**
 * Where direct uploads wait in the bucket until they end: a key prefix whose name starts with a
 * dot, which no storage key and no path of the files route can name, so bytes nobody checked
 * yet are never served as a stored file.
 */
export const DIRECT_FOLDER = '.direct'

const DIRECT_KEY = /^\.direct\/([A-Za-z0-9_-]{22})$/

/** The pending key of the upload `id`: the server's, never the client's. */
export function pendingKeyOf(id: string): StorageKey {
  return `${DIRECT_FOLDER}/${id}` as StorageKey
}

/** The ledger id of a pending object (a key as `storage.list()` yields it), else null. */
export function directIdOfKey(key: string): string | null {
  return DIRECT_KEY.exec(key)?.[1] ?? null
}
