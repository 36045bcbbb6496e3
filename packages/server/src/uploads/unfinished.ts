import type { UploadRow, UploadVia } from '../db/upload-ledger.js'
import type { StorageKey } from '../shared/types.js'

/** Bytes that finished arriving: a local file, or an object in the configured storage. */
export type FinishedBytes = { kind: 'file'; path: string } | { kind: 'object'; key: StorageKey }

/** What one way of uploading (`via`) keeps for its unfinished uploads, and how to let go of it. */
export interface UnfinishedBytes {
  /** Removes everything kept for the row's upload (bytes, parts, sidecar files); idempotent. */
  remove(row: UploadRow): Promise<void>
  /**
   * For a way whose client finishes without calling the server back (a presigned upload): the
   * finished bytes of a 'receiving' row when they are complete, else null.
   */
  completed?(row: UploadRow): Promise<FinishedBytes | null>
  /**
   * For `files reconcile`: the ledger id a stored object belongs to when it is one of this way's
   * unfinished objects (key as `storage.list()` yields it), else null.
   */
  idOfKey?(key: string): string | null
  /**
   * Removes what the way keeps for uploads whose ledger row is gone (a crash between the two),
   * by its own expiry; answers how many. Run by the expiry sweep.
   */
  sweepOrphans?(): Promise<number>
}

/** Each way registers its own at start; the ending, the sweep and reconcile ask it. */
export interface UnfinishedUploads {
  register(via: UploadVia, bytes: UnfinishedBytes): void
  of(via: UploadVia): UnfinishedBytes | undefined
  /** The ledger id an object of any way belongs to, else null. */
  idOfKey(key: string): string | null
  /** Every registered way. */
  all(): readonly UnfinishedBytes[]
}

export function createUnfinishedUploads(): UnfinishedUploads {
  const ways = new Map<UploadVia, UnfinishedBytes>()
  return {
    register(via, bytes) {
      if (ways.has(via)) throw new Error(`unfinished uploads of ${via} are registered twice`)
      ways.set(via, bytes)
    },
    of: (via) => ways.get(via),
    all: () => [...ways.values()],
    idOfKey(key) {
      for (const way of ways.values()) {
        const id = way.idOfKey?.(key)
        if (id) return id
      }
      return null
    },
  }
}
