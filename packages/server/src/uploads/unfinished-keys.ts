import { directIdOfKey } from './direct/keys.js'
import { tusIdOfKey } from './tus/keys.js'

/** Each way's recogniser of the objects it keeps for unfinished uploads. */
const RECOGNISERS: readonly ((key: string) => string | null)[] = [tusIdOfKey, directIdOfKey]

/**
 * The ledger id a stored object belongs to when an unfinished resumable or direct upload keeps
 * it, else null: what `files reconcile` asks without starting the server.
 */
export function unfinishedUploadId(key: string): string | null {
  for (const recognise of RECOGNISERS) {
    const id = recognise(key)
    if (id) return id
  }
  return null
}
