import type { DbTransaction, DocumentRepository } from '../db/document-repo.js'
import type { FileEntry } from '../db/types.js'
import type { Logger, StorageKey } from '../shared/types.js'
import type { StorageDriver } from '../storage/driver.js'

/** What removing a stored file lets a caller add: work in its transaction, and after it. */
export interface FileRemovalHooks {
  /** Inside the transaction that deletes the index row; throwing keeps the file. */
  within?: (trx: DbTransaction, removed: FileEntry) => Promise<void>
  /** After the row and the bytes are gone. */
  removed?: (removed: FileEntry) => void | Promise<void>
}

export interface OrphanDeps {
  documents: DocumentRepository
  storage: StorageDriver
  log: Logger
}

/** Files looked at per query while listing or sweeping orphans. */
const PAGE = 200

/**
 * Every orphan (see `DocumentRepository.orphans`) stored before `storedBefore`, by id, a page
 * at a time; none while tracking has never started.
 */
export async function* listOrphans(
  documents: DocumentRepository,
  storedBefore: number,
): AsyncGenerator<FileEntry> {
  let afterId: number | undefined
  for (;;) {
    const page = await documents.orphans({ storedBefore, afterId, limit: PAGE })
    yield* page
    if (page.length < PAGE) return
    afterId = page[page.length - 1]?.id
  }
}

/**
 * The one way a stored file leaves as an orphan: its index row goes in one transaction (with
 * `hooks.within`) only if it is still an orphan then, and the bytes after the commit. A failure
 * to delete the bytes leaves an object without a row, which `files reconcile` removes; the
 * reverse order could leave a row whose file is gone. Its bytes leave the owner's quota with the
 * row (usage is summed over the index). Null: it was no orphan any more (a document now uses
 * it, or it is already gone).
 */
export async function removeOrphanFile(
  deps: OrphanDeps,
  key: StorageKey,
  storedBefore: number,
  hooks: FileRemovalHooks = {},
): Promise<FileEntry | null> {
  const removed = await deps.documents.removeOrphan(key, { storedBefore, within: hooks.within })
  if (removed === null) return null
  try {
    await deps.storage.delete(key)
  } catch (cause) {
    deps.log.warn(
      { key, err: cause },
      'orphan: index row removed but its object was not; files reconcile removes it',
    )
  }
  await hooks.removed?.(removed)
  return removed
}

export interface SweepResult {
  /** Orphans found. */
  found: number
  /** Of those, removed (found minus those a document took in the meantime). */
  removed: number
  /** Bytes of the removed files. */
  bytes: number
}

/**
 * Lists the orphans stored before `storedBefore` and, with `fix`, removes each; `seen` is called
 * with each orphan as it is found (and whether it went).
 */
export async function sweepOrphans(
  deps: OrphanDeps,
  o: {
    storedBefore: number
    fix: boolean
    hooks?: FileRemovalHooks
    seen?: (file: FileEntry, removed: boolean) => void
  },
): Promise<SweepResult> {
  const result: SweepResult = { found: 0, removed: 0, bytes: 0 }
  for await (const file of listOrphans(deps.documents, o.storedBefore)) {
    result.found++
    let gone = false
    if (o.fix) {
      gone = (await removeOrphanFile(deps, file.key, o.storedBefore, o.hooks)) !== null
      if (gone) {
        result.removed++
        result.bytes += file.size
      }
    }
    o.seen?.(file, gone)
  }
  return result
}
