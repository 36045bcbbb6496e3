import type { DocumentRecord } from '../db/document-repo.js'
import type { DbTransaction, FileEntry } from '../db/types.js'
import { publicUrlOf } from '../shared/public-url.js'
import type { Events } from './publisher.js'
import { newEvent, type UeditorEvent } from './types.js'

/**
 * Hooks of one kind of change: `within` builds the event from the changed row and records it in
 * the change's transaction; `after`, once the change has committed, announces it. Concurrent
 * changes are told apart by the row object itself, which the repository hands to both.
 */
interface ChangeHooks<T, A extends unknown[] = []> {
  within(trx: DbTransaction, changed: T, ...context: A): Promise<void>
  after(changed: T): void
}

/** The documents service's hooks (`DocumentHooks`): `documentSaved` and `documentDeleted`. */
export interface DocumentEventHooks {
  /** `article.foreign`: the remote images left in the saved article. */
  saved: ChangeHooks<DocumentRecord, [article: { foreign: readonly string[] }]>
  deleted: ChangeHooks<DocumentRecord>
}

/** The orphan clean-up's hooks (`FileRemovalHooks`): `fileDeleted` with reason `orphan`. */
export interface OrphanEventHooks {
  within(trx: DbTransaction, removed: FileEntry): Promise<void>
  removed(file: FileEntry): void
}

export function documentEventHooks(events: Events, publicUrl: string): DocumentEventHooks {
  return {
    saved: changeHooks(events, (doc: DocumentRecord, article: { foreign: readonly string[] }) =>
      newEvent('documentSaved', {
        id: doc.id,
        owner: doc.owner,
        files: doc.keys.map((key) => publicUrlOf(publicUrl, key)),
        foreign: [...article.foreign],
      }),
    ),
    deleted: changeHooks(events, (doc: DocumentRecord) =>
      newEvent('documentDeleted', { id: doc.id, owner: doc.owner }),
    ),
  }
}

export function orphanEventHooks(events: Events, publicUrl: string): OrphanEventHooks {
  const hooks = changeHooks(events, (removed: FileEntry) =>
    newEvent('fileDeleted', {
      key: removed.key,
      url: publicUrlOf(publicUrl, removed.key),
      owner: removed.owner,
      reason: 'orphan',
    }),
  )
  return { within: hooks.within, removed: hooks.after }
}

function changeHooks<T extends object, A extends unknown[]>(
  events: Events,
  build: (changed: T, ...context: A) => UeditorEvent,
): ChangeHooks<T, A> {
  // A change that rolls back never reaches `after`; its entry goes with its row object.
  const pending = new WeakMap<T, UeditorEvent>()
  return {
    async within(trx, changed, ...context) {
      const event = build(changed, ...context)
      pending.set(changed, event)
      await events.record(trx, event)
    },
    after(changed) {
      const event = pending.get(changed)
      pending.delete(changed)
      if (event !== undefined) events.committed(event)
    },
  }
}
