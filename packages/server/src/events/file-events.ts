import type { FileEntry, FileIndex } from '../db/types.js'
import { type Events, recording } from '../events/publisher.js'
import { type FileDeletedReason, newEvent } from '../events/types.js'
import { publicUrlOf } from '../shared/public-url.js'
import type { StorageKey } from '../shared/types.js'

/** What announcing a stored or deleted file needs. */
export interface FileEventDeps {
  files: FileIndex
  events: Events
  /** The base of the URLs the editor is given (`config.publicUrl`). */
  publicUrl: string
}

/**
 * Indexes a stored file and, in the same transaction when a webhook is set, its `fileStored`
 * event; the in-process handlers hear of it once the row has committed.
 */
export async function indexAnnounced(
  deps: FileEventDeps,
  entry: Omit<FileEntry, 'id' | 'createdAt'>,
): Promise<FileEntry> {
  const event = newEvent('fileStored', {
    key: entry.key,
    url: publicUrlOf(deps.publicUrl, entry.key),
    category: entry.category,
    size: entry.size,
    mime: entry.mime,
    owner: entry.owner,
    originalName: entry.originalName,
  })
  const added = await deps.files.add(entry, { within: recording(deps.events, event) })
  deps.events.committed(event)
  return added
}

/**
 * Removes a file's index row and, in the same transaction, records its `fileDeleted` event;
 * false (and no event) when no row had the key. The bytes are the caller's.
 */
export async function removeAnnounced(
  deps: FileEventDeps,
  key: StorageKey,
  reason: FileDeletedReason,
): Promise<boolean> {
  let event: ReturnType<typeof newEvent<'fileDeleted'>> | undefined
  const removed = await deps.files.remove(key, {
    async within(trx, row) {
      event = newEvent('fileDeleted', {
        key: row.key,
        url: publicUrlOf(deps.publicUrl, row.key),
        owner: row.owner,
        reason,
      })
      await deps.events.record(trx, event)
    },
  })
  if (event !== undefined) deps.events.committed(event)
  return removed
}
