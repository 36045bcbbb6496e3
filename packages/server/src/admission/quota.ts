import type { ServerConfig } from '../config/load.js'
import type { FileIndex } from '../db/types.js'
import type { UploadLedger } from '../db/upload-ledger.js'
import { UeError } from '../shared/errors.js'

/** What the quota is counted from: the stored files and the reservations of unfinished uploads. */
export interface QuotaDeps {
  config: ServerConfig
  files: Pick<FileIndex, 'usage'>
  uploads: Pick<UploadLedger, 'reserved'>
}

/**
 * The per-user quota: the bytes stored, summed in the index, and the declared sizes of the
 * user's resumable and direct uploads still on their way (`except` the one being settled, whose
 * stored file counts in its place), plus `size`. Each writer counts after its own row exists
 * (the index row of a stored file, the ledger row of a reservation), so two nodes writing for
 * one user at once cannot both pass.
 */
export async function checkQuota(
  deps: QuotaDeps,
  owner: string | null,
  size: number,
  except?: string,
): Promise<void> {
  const quota = deps.config.limits.quotaBytes
  if (quota === 0 || owner === null) return
  const [stored, reserved] = await Promise.all([
    deps.files.usage(owner),
    deps.uploads.reserved(owner, except),
  ])
  if (stored + reserved + size > quota) throw new UeError('UE_QUOTA_EXCEEDED')
}
