import type { FileIndex, IndexedKey } from '../db/types.js'
import type { UploadLedger } from '../db/upload-ledger.js'
import { UeError } from '../shared/errors.js'
import type { StorageKey } from '../shared/types.js'
import { compareKeys, type ListedObject, type StorageDriver } from '../storage/driver.js'

/** Rows are read this many at a time; objects come page by page from the driver. */
const ROW_BATCH = 1000

export type Mismatch =
  | { kind: 'object without row'; key: string; size: number; at: number }
  | { kind: 'row without object'; key: string; size: number; at: number }
  /** An object whose name this server never gives: left alone, it belongs to someone else. */
  | { kind: 'foreign object'; key: string; size: number; at: number }
  /** An object a resumable or direct upload kept, whose upload no longer exists. */
  | { kind: 'unfinished upload without row'; key: string; size: number; at: number }

/** What was done about one mismatch. */
export type Action =
  | 'reported'
  | 'fixed'
  | 'kept: younger than the grace period'
  | 'kept: changed'
  | 'kept: not a name this server gives'

export interface ReconcileOptions {
  storage: StorageDriver
  files: FileIndex
  fix: boolean
  /**
   * The key when this server could have given it (`keyRecogniser` over the configured path
   * formats), else null: only such objects are ever deleted.
   */
  ours(key: string): StorageKey | null
  /**
   * Objects that unfinished resumable and direct uploads keep: the ledger id of such a key, else
   * null, and the ledger that says whether that upload still lives.
   */
  unfinished?: { idOfKey(key: string): string | null; uploads: UploadLedger }
  /** With `fix`, only objects and rows at least this old are removed. */
  graceMs: number
  onMismatch(m: Mismatch, action: Action): void
  now?: number
}

export interface ReconcileSummary {
  objects: number
  rows: number
  objectsWithoutRow: number
  rowsWithoutObject: number
  foreign: number
  /** Objects of unfinished uploads that still live: not mismatches. */
  unfinished: number
  /** Objects of unfinished uploads that are gone from the ledger. */
  unfinishedWithoutRow: number
  fixed: number
}

/**
 * Compares the storage with the index: both are read in ascending byte order of the key and
 * merged, so memory holds one page of each, however many objects there are. With `fix`, an
 * object without a row and a row without an object are removed when older than the grace
 * period (an upload in flight on another node has its object before its row) and still
 * mismatched when checked again just before.
 */
export async function reconcile(o: ReconcileOptions): Promise<ReconcileSummary> {
  const now = o.now ?? Date.now()
  const summary: ReconcileSummary = {
    objects: 0,
    rows: 0,
    objectsWithoutRow: 0,
    rowsWithoutObject: 0,
    foreign: 0,
    unfinished: 0,
    unfinishedWithoutRow: 0,
    fixed: 0,
  }
  const objects = inOrder(o.storage.list())
  const rows = rowsOf(o.files)
  let object = await objects.next()
  let row = await rows.next()

  const settle = async (m: Mismatch, remove: () => Promise<boolean>) => {
    if (!o.fix) return o.onMismatch(m, 'reported')
    if (m.kind === 'foreign object') return o.onMismatch(m, 'kept: not a name this server gives')
    if (now - m.at < o.graceMs) return o.onMismatch(m, 'kept: younger than the grace period')
    const removed = await remove()
    if (removed) summary.fixed++
    o.onMismatch(m, removed ? 'fixed' : 'kept: changed')
  }

  while (!object.done || !row.done) {
    const order = object.done ? 1 : row.done ? -1 : compareKeys(object.value.key, row.value.key)
    if (order === 0) {
      summary.objects++
      summary.rows++
      object = await objects.next()
      row = await rows.next()
    } else if (order < 0 && !object.done) {
      const { key, size, modifiedAt } = object.value
      summary.objects++
      const valid = o.ours(key)
      const upload = o.unfinished?.idOfKey(key) ?? null
      if (upload !== null && o.unfinished) {
        if ((await o.unfinished.uploads.get(upload)) !== null) summary.unfinished++
        else {
          summary.unfinishedWithoutRow++
          const m = { kind: 'unfinished upload without row', key, size, at: modifiedAt } as const
          await settle(m, async () => {
            if ((await o.unfinished?.uploads.get(upload)) !== null) return false
            await o.storage.delete(key as StorageKey)
            return true
          })
        }
      } else if (valid === null) {
        summary.foreign++
        await settle({ kind: 'foreign object', key, size, at: modifiedAt }, async () => false)
      } else {
        summary.objectsWithoutRow++
        await settle({ kind: 'object without row', key, size, at: modifiedAt }, async () => {
          if ((await o.files.get(valid)) !== null) return false
          await o.storage.delete(valid)
          return true
        })
      }
      object = await objects.next()
    } else if (!row.done) {
      const { key, size, createdAt } = row.value
      summary.rows++
      summary.rowsWithoutObject++
      await settle({ kind: 'row without object', key, size, at: createdAt }, async () => {
        if ((await o.storage.stat(key)) !== null) return false
        return o.files.remove(key)
      })
      row = await rows.next()
    }
  }
  return summary
}

/** Every row, a batch at a time, in the order of the storage listing. */
async function* rowsOf(files: FileIndex): AsyncGenerator<IndexedKey> {
  let after: StorageKey | null = null
  for (;;) {
    const batch = await files.keysAfter(after, ROW_BATCH)
    yield* batch
    if (batch.length < ROW_BATCH) return
    after = batch[batch.length - 1]?.key ?? null
  }
}

/** The merge is only right over sorted input: a store that lists out of order stops it. */
async function* inOrder(listed: AsyncIterable<ListedObject>): AsyncGenerator<ListedObject> {
  let previous: string | undefined
  for await (const item of listed) {
    if (previous !== undefined && compareKeys(previous, item.key) >= 0)
      throw new UeError('UE_STORAGE_FAILED', {
        detail: 'the storage lists keys out of byte order, so they cannot be compared',
      })
    previous = item.key
    yield item
  }
}
