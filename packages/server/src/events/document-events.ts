import type { DocumentRecord } from '../db/document-repo.js'
import type { DbTransaction, FileEntry } from '../db/types.js'
import { publicUrlOf } from '../shared/public-url.js'
import type { Events } from './publisher.js'
import { newEvent, type UeditorEvent } from './types.js'

/**
 * One change's event: `within` builds it from the changed row and records it in the change's
 * transaction (pass it as the repository's `within`); `committed`, called once the change has
 * returned, announces it. A change that fails or changes nothing announces nothing.
 */
export interface Announcement<T> {
  within(trx: DbTransaction, changed: T): Promise<void>
  committed(): void
}

/** The hooks of the orphan clean-up (`sweepOrphans`' `hooks`): one `fileDeleted` per file. */
export interface OrphanRemovalHooks {
  within(trx: DbTransaction, removed: FileEntry): Promise<void>
  removed(file: FileEntry): void
}

/** The events of the documents API and of the orphan clean-up, for the composition root. */
export interface DocumentEvents {
  /** `documentSaved`, for `documents.save`; `foreign` are the remote images left in it. */
  saved(foreign: readonly string[]): Announcement<DocumentRecord>
  /** `documentDeleted`, for `documents.remove`. */
  deleted(): Announcement<DocumentRecord>
  /** `fileDeleted` with reason `orphan`, for each file the orphan clean-up removes. */
  orphanRemoval(): OrphanRemovalHooks
}

export function documentEvents(events: Events, publicUrl: string): DocumentEvents {
  const announcement = <T>(build: (changed: T) => UeditorEvent): Announcement<T> => {
    let event: UeditorEvent | undefined
    return {
      async within(trx, changed) {
        event = build(changed)
        await events.record(trx, event)
      },
      committed() {
        if (event !== undefined) events.committed(event)
      },
    }
  }
  return {
    saved: (foreign) =>
      announcement((doc: DocumentRecord) =>
        newEvent('documentSaved', {
          id: doc.id,
          owner: doc.owner,
          files: doc.keys.map((key) => publicUrlOf(publicUrl, key)),
          foreign: [...foreign],
        }),
      ),
    deleted: () =>
      announcement((doc: DocumentRecord) =>
        newEvent('documentDeleted', { id: doc.id, owner: doc.owner }),
      ),
    orphanRemoval() {
      // One sweep removes many files, each in its own transaction.
      const pending = new Map<string, UeditorEvent>()
      return {
        async within(trx, removed) {
          const event = newEvent('fileDeleted', {
            key: removed.key,
            url: publicUrlOf(publicUrl, removed.key),
            owner: removed.owner,
            reason: 'orphan',
          })
          pending.set(removed.key, event)
          await events.record(trx, event)
        },
        removed(file) {
          const event = pending.get(file.key)
          pending.delete(file.key)
          if (event !== undefined) events.committed(event)
        },
      }
    },
  }
}
