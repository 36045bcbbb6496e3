import type { UploadCategory, UploadRow } from '../../db/upload-ledger.js'
import { CODES, UeError, type UeErrorCode } from '../../shared/errors.js'
import { messageFor } from '../../shared/messages.js'
import type { StorageKey } from '../../shared/types.js'
import type { DirectBucket } from '../../storage/s3-direct.js'
import { claimAndFinish, type UploadDeps } from '../finish.js'
import type { UnfinishedBytes } from '../unfinished.js'
import { DIRECT_FOLDER, directIdOfKey, parsePendingRef } from './keys.js'
import { abortOrphanMultiparts, removeDirectBytes } from './sweep.js'

/** A direct upload as its ledger row records it. */
export interface DirectRow {
  id: string
  /** `.direct/<id>`: where the browser's bytes land. */
  key: StorageKey
  /** The multipart upload the server started for it; null for a simple upload. */
  uploadId: string | null
  owner: string | null
  client: string | null
  category: UploadCategory
  state: UploadRow['state']
  /** The row as the ledger has it, for the ending. */
  row: UploadRow
}

/** What the complete call answers once the ending ran, or while another node runs it. */
export type Finished =
  | { state: 'SUCCESS'; url: string; title: string; original: string; type: string; size: number }
  | { state: string; code: 'UE_UPLOAD_PENDING' }

/** What the signing routes need of the upload ledger, over the ledger and the one ending. */
export interface DirectLedger {
  /** A row admission opened, as a direct upload. */
  rowOf(row: UploadRow): DirectRow
  get(id: string): Promise<DirectRow | null>
  /** Forgets an upload the client gave up, with whatever it left in the bucket. */
  discard(row: DirectRow): Promise<void>
  /** Settles an upload as refused (its reservation released) and removes its bytes. */
  refuse(row: DirectRow, error: UeError): Promise<void>
  /** Runs the one ending on the finished pending object; throws the refusal. */
  finish(row: DirectRow): Promise<Finished>
}

export function createDirectLedger(deps: UploadDeps): DirectLedger {
  const { uploads } = deps
  const rowOf = (row: UploadRow): DirectRow => ({
    id: row.id,
    ...parsePendingRef(row.storeRef),
    owner: row.owner,
    client: row.client,
    category: row.category,
    state: row.state,
    row,
  })
  const removeBytes = async (row: DirectRow) => {
    const way = deps.unfinished.of('direct')
    if (way) await way.remove(row.row)
  }
  return {
    rowOf,
    async get(id) {
      const row = await uploads.get(id)
      return row?.via === 'direct' ? rowOf(row) : null
    },
    async discard(row) {
      await removeBytes(row)
      await uploads.remove(row.id)
    },
    async refuse(row, error) {
      if (!(await uploads.claim(row.id))) return
      await removeBytes(row)
      await deps.admission.settle(row.id, {
        code: error.code,
        message: messageFor(deps.config.locale, error.code),
      })
    },
    async finish(row) {
      const outcome = await claimAndFinish(deps, row.row, { kind: 'object', key: row.key })
      if (outcome === null)
        return {
          state: messageFor(deps.config.locale, 'UE_UPLOAD_PENDING'),
          code: 'UE_UPLOAD_PENDING',
        }
      if ('state' in outcome) return outcome
      throw new UeError(outcome.code in CODES ? (outcome.code as UeErrorCode) : 'UE_INTERNAL')
    },
  }
}

/**
 * What direct uploads keep until they end, for the ending, the expiry sweep and reconcile: the
 * pending object (and its multipart upload) under `.direct/<id>`.
 */
export function directUnfinished(
  bucket: DirectBucket,
  storage: UploadDeps['storage'],
  isLive: (id: string) => Promise<boolean>,
  expiresMs: number,
): UnfinishedBytes {
  return {
    remove: (row) => removeDirectBytes(bucket, storage, parsePendingRef(row.storeRef)),
    // A simple upload never calls back: its bytes are complete once the object exists.
    async completed(row) {
      const { key } = parsePendingRef(row.storeRef)
      return (await storage.stat(key)) ? { kind: 'object', key } : null
    },
    idOfKey: directIdOfKey,
    // Multipart uploads whose row is gone (removed while their abort failed): after the expiry.
    sweepOrphans: () =>
      abortOrphanMultiparts(bucket, `${DIRECT_FOLDER}/`, isLive, Date.now() - expiresMs),
  }
}
