import type { StorageKey } from '../../shared/types.js'
import type { StorageDriver } from '../../storage/driver.js'
import type { DirectBucket } from '../../storage/s3-direct.js'

/**
 * Removes what an unfinished direct upload left in the bucket: the one multipart upload its row
 * records (with its parts), if any, and its pending object. The object goes even when the abort
 * fails; nothing is listed, so a bucket that refuses listing multipart uploads still loses it.
 * Idempotent.
 */
export async function removeDirectBytes(
  bucket: DirectBucket,
  storage: StorageDriver,
  pending: { key: StorageKey; uploadId: string | null },
): Promise<void> {
  try {
    if (pending.uploadId !== null) await bucket.abort(pending.key, pending.uploadId)
  } finally {
    await storage.delete(pending.key)
  }
}

/**
 * Aborts the multipart uploads under the pending prefix that no live upload owns and that were
 * started before `before` (ms since the epoch): one whose row is gone, e.g. removed while its
 * abort failed. Returns how many were aborted.
 */
export async function abortOrphanMultiparts(
  bucket: DirectBucket,
  pendingPrefix: string,
  isLive: (id: string) => Promise<boolean>,
  before: number,
): Promise<number> {
  let aborted = 0
  for await (const open of bucket.openMultiparts(pendingPrefix)) {
    if (open.initiatedAt >= before) continue
    if (await isLive(open.key.slice(pendingPrefix.length))) continue
    await bucket.abort(open.key, open.uploadId)
    aborted++
  }
  return aborted
}
