/**
 * Where unfinished tus uploads live, beside the stored files but never among them: a folder (on
 * disk) or a key prefix (in the bucket) whose name starts with a dot, which no storage key and
 * no path of the files route can name, and which the disk driver's listing skips.
 */
export const TUS_FOLDER = '.tus'

/** A ledger id as the server makes them: 128 random bits, base64url. */
export const UPLOAD_ID = /^[A-Za-z0-9_-]{22}$/

const TUS_KEY = /^\.tus\/([A-Za-z0-9_-]{22})(?:\.info|\.part)?$/

/**
 * The ledger id of an object the tus store keeps in the bucket (the upload, its record and its
 * incomplete part, keys as `storage.list()` yields them), else null.
 */
export function tusIdOfKey(key: string): string | null {
  return TUS_KEY.exec(key)?.[1] ?? null
}
