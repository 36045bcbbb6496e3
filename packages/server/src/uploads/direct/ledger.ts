import type { UploadResult } from '../../editor/results.js'
import type { UeError } from '../../shared/errors.js'
import type { StorageKey } from '../../shared/types.js'

/** A direct upload as its ledger row records it. */
export interface DirectRow {
  id: string
  /** `<direct.pendingPrefix><id>`: where the browser's bytes land. */
  key: StorageKey
  owner: string | null
  client: string | null
  category: string
  state: 'receiving' | 'processing' | 'done' | 'refused'
}

/** What the signing routes need of the upload ledger. */
export interface DirectLedger {
  /** Records a new upload (its declared size reserved against the owner's quota). */
  open(d: {
    owner: string | null
    client: string | null
    category: string
    originalName: string
    size: number
  }): Promise<DirectRow>
  get(id: string): Promise<DirectRow | null>
  /** Forgets an upload the client gave up, with its pending object. */
  discard(row: DirectRow): Promise<void>
  /** Settles an upload as refused, its reservation released. */
  refuse(row: DirectRow, error: UeError): Promise<void>
  /** Runs the one ending on the finished pending object; throws the refusal. */
  finish(row: DirectRow): Promise<UploadResult>
  remove(id: string): Promise<void>
}
