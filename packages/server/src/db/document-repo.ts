import type { Kysely } from '#kysely'
import { UeError } from '../shared/errors.js'
import type { StorageKey } from '../shared/types.js'
import { guarded, isForeignKeyViolation } from './errors.js'
import { toEntry } from './file-index.js'
import { isPostgres } from './identity.js'
import type { DbSchema, DocumentRow } from './schema.js'
import type { FileEntry } from './types.js'

/** The transaction a `within` callback runs in: a Kysely over the same schema. */
export type DbTransaction = Kysely<DbSchema>

/** A document as the database keeps it: who owns it, when it was saved, the files it uses. */
export interface DocumentRecord {
  /** The host app's id (1-200 characters). */
  id: string
  /** The user who first saved it; null when a service credential (or nobody) did. */
  owner: string | null
  /** Milliseconds since the epoch. */
  createdAt: number
  savedAt: number
  /** Keys of the indexed files it references, in byte order. */
  keys: StorageKey[]
}

/** Who writes, and what else must happen in the same transaction. */
export interface DocumentWriteOptions<T> {
  /** The user who writes: a new document becomes theirs. Null: a service credential, or nobody. */
  user: string | null
  /** Admins and services write any document; anyone else only documents they own (and new ones). */
  anyDocument: boolean
  /**
   * Runs inside the transaction of the change, after it; throwing rolls the change back. Events
   * write their outbox row here, so an event exists exactly when its change does.
   */
  within?: (trx: DbTransaction, changed: T) => Promise<void>
  /** Default: now. */
  now?: number
}

/** When tracking started: only files with an id above `lastFileBefore` can become orphans. */
export interface TrackingStart {
  /** Milliseconds since the epoch. */
  startedAt: number
  lastFileBefore: number
}

export interface OrphanQuery {
  /** Only files stored before this moment (milliseconds since the epoch): the grace period. */
  storedBefore: number
  /** Only files with a larger id (paging). */
  afterId?: number
  limit: number
}

/**
 * Documents, their file references and the tracking start, in the metadata database (SQLite
 * and PostgreSQL). A save and a delete are each one transaction, with `within` in it.
 */
export interface DocumentRepository {
  get(id: string): Promise<DocumentRecord | null>
  /**
   * Creates the document or replaces its references with the indexed files among `keys` (keys
   * the index does not hold are left out of the answer). A document owned by another user is
   * refused with UE_FORBIDDEN unless `anyDocument`; the owner never changes.
   */
  save(
    id: string,
    keys: readonly StorageKey[],
    options: DocumentWriteOptions<DocumentRecord>,
  ): Promise<DocumentRecord>
  /**
   * Deletes the document and its references; null when there is none. A document owned by
   * another user is refused with UE_FORBIDDEN unless `anyDocument`.
   */
  remove(id: string, options: DocumentWriteOptions<DocumentRecord>): Promise<DocumentRecord | null>
  /**
   * Starts tracking, once: the first call records the moment and the largest file id, and every
   * later call (any node, any restart) answers that first start.
   */
  startTracking(now?: number): Promise<TrackingStart>
  /** Null while tracking has never started. */
  tracking(): Promise<TrackingStart | null>
  /**
   * Files stored after tracking started and before `storedBefore` that no document references,
   * by id; none while tracking has never started.
   */
  orphans(q: OrphanQuery): Promise<FileEntry[]>
  /**
   * Deletes the index row of `key` if it is still an orphan as `orphans` defines it, in one
   * transaction with `within`; the caller then deletes the bytes. Null: not an orphan (any more).
   */
  removeOrphan(
    key: StorageKey,
    options: {
      storedBefore: number
      within?: (trx: DbTransaction, removed: FileEntry) => Promise<void>
    },
  ): Promise<FileEntry | null>
}

/** The longest document id the host app may use, in characters. */
export const MAX_DOCUMENT_ID_LENGTH = 200

/** Keys per `in (…)` list: well under both engines' limits on bound parameters. */
const KEYS_PER_QUERY = 500

const TRACKING_ROW = 1

export function createDocumentRepository(db: Kysely<DbSchema>): DocumentRepository {
  return {
    get: (id) => guarded(() => getDocument(db, id)),
    save: (id, keys, options) =>
      transact(
        db,
        (trx) => save(trx, id, keys, options.now ?? Date.now(), options),
        options.within,
      ),
    remove: (id, options) => transact(db, (trx) => remove(trx, id, options), options.within),
    startTracking: (now) => guarded(() => startTracking(db, now ?? Date.now())),
    tracking: () => guarded(() => tracking(db)),
    orphans: (q) => guarded(() => orphans(db, q)),
    removeOrphan: (key, options) =>
      transact(db, (trx) => removeOrphan(trx, key, options.storedBefore), options.within),
  }
}

/**
 * `work` and then `within` in one transaction. Database failures become UE_INDEX_FAILED (see
 * `guarded`); what `within` throws passes through as it is, after the rollback.
 */
async function transact<T>(
  db: Kysely<DbSchema>,
  work: (trx: Kysely<DbSchema>) => Promise<T>,
  within: ((trx: Kysely<DbSchema>, changed: NonNullable<T>) => Promise<void>) | undefined,
): Promise<T> {
  let failed: { error: unknown } | undefined
  try {
    return await db.transaction().execute(async (trx) => {
      const changed = await work(trx)
      if (within && changed !== null && changed !== undefined)
        try {
          await within(trx, changed)
        } catch (error) {
          failed = { error }
          throw error
        }
      return changed
    })
  } catch (cause) {
    if (failed !== undefined && cause === failed.error) throw cause
    // A reference to a file that an orphan removal deleted meanwhile (PostgreSQL).
    if (isForeignKeyViolation(cause))
      throw new UeError('UE_CONFLICT', {
        detail: 'a file it uses was removed at the same time; save again',
        cause,
      })
    return guarded(() => Promise.reject(cause))
  }
}

async function getDocument(db: Kysely<DbSchema>, id: string): Promise<DocumentRecord | null> {
  const row = await db.selectFrom('documents').selectAll().where('id', '=', id).executeTakeFirst()
  return row === undefined ? null : toRecord(row, await referencedKeys(db, id))
}

/**
 * The document row is written first, in one conditional upsert: it takes the write lock at once
 * (SQLite) and settles the owner check and a concurrent first save of the same id together.
 */
async function save(
  trx: Kysely<DbSchema>,
  id: string,
  keys: readonly StorageKey[],
  now: number,
  options: DocumentWriteOptions<DocumentRecord>,
): Promise<DocumentRecord> {
  const row = await trx
    .insertInto('documents')
    .values({ id, owner: options.user, createdAt: now, savedAt: now })
    .onConflict((c) => {
      const update = c.column('id').doUpdateSet({ savedAt: (eb) => eb.ref('excluded.savedAt') })
      if (options.anyDocument) return update
      const { user } = options
      return update.where((eb) =>
        user === null ? eb.lit(false) : eb('documents.owner', '=', user),
      )
    })
    .returningAll()
    .executeTakeFirst()
  if (row === undefined)
    throw new UeError('UE_FORBIDDEN', { detail: 'another user owns this document' })
  await trx.deleteFrom('documentFiles').where('documentId', '=', id).execute()
  const files: { id: number; key: StorageKey }[] = []
  const wanted = [...new Set(keys)]
  for (let i = 0; i < wanted.length; i += KEYS_PER_QUERY) {
    const chunk = wanted.slice(i, i + KEYS_PER_QUERY)
    const found = await trx
      .selectFrom('files')
      .select(['id', 'key'])
      .where('key', 'in', chunk)
      .execute()
    files.push(...found.map((f) => ({ id: Number(f.id), key: f.key })))
  }
  for (let i = 0; i < files.length; i += KEYS_PER_QUERY)
    await trx
      .insertInto('documentFiles')
      .values(files.slice(i, i + KEYS_PER_QUERY).map((f) => ({ documentId: id, fileId: f.id })))
      .execute()
  return toRecord(row, byteOrder(files.map((f) => f.key)))
}

/**
 * The first statement changes nothing but locks the row (PostgreSQL) and takes the write lock
 * (SQLite), so no save of the same document runs between the owner check and the delete.
 */
async function remove(
  trx: Kysely<DbSchema>,
  id: string,
  options: DocumentWriteOptions<DocumentRecord>,
): Promise<DocumentRecord | null> {
  await trx
    .updateTable('documents')
    .set((eb) => ({ savedAt: eb.ref('savedAt') }))
    .where('id', '=', id)
    .execute()
  const existing = await getDocument(trx, id)
  if (existing === null) return null
  if (!options.anyDocument && (options.user === null || existing.owner !== options.user))
    throw new UeError('UE_FORBIDDEN', { detail: 'another user owns this document' })
  await trx.deleteFrom('documentFiles').where('documentId', '=', id).execute()
  await trx.deleteFrom('documents').where('id', '=', id).execute()
  return existing
}

/**
 * `insert … select` in one statement, so two nodes starting at once record one start; on
 * SQLite the `where true` keeps `on conflict` from being read as a join's `on`.
 */
async function startTracking(db: Kysely<DbSchema>, now: number): Promise<TrackingStart> {
  await db
    .insertInto('documentTracking')
    .columns(['id', 'startedAt', 'lastFileBefore'])
    .expression((eb) =>
      eb
        .selectFrom('files')
        .select((s) => [
          s.lit(TRACKING_ROW).as('id'),
          s.val(now).as('startedAt'),
          s.fn.coalesce(s.fn.max('id'), s.lit(0)).as('lastFileBefore'),
        ])
        .where((s) => s.lit(true)),
    )
    .onConflict((c) => c.column('id').doNothing())
    .execute()
  const start = await tracking(db)
  if (start === null)
    throw new UeError('UE_INDEX_FAILED', { detail: 'tracking start not recorded' })
  return start
}

async function tracking(db: Kysely<DbSchema>): Promise<TrackingStart | null> {
  const row = await db
    .selectFrom('documentTracking')
    .select(['startedAt', 'lastFileBefore'])
    .where('id', '=', TRACKING_ROW)
    .executeTakeFirst()
  return row === undefined
    ? null
    : { startedAt: Number(row.startedAt), lastFileBefore: Number(row.lastFileBefore) }
}

function orphanRows(db: Kysely<DbSchema>, storedBefore: number) {
  return db
    .selectFrom('files')
    .innerJoin('documentTracking', (join) => join.on('documentTracking.id', '=', TRACKING_ROW))
    .selectAll('files')
    .whereRef('files.id', '>', 'documentTracking.lastFileBefore')
    .where('files.createdAt', '<', storedBefore)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('documentFiles')
            .select('documentFiles.fileId')
            .whereRef('documentFiles.fileId', '=', 'files.id'),
        ),
      ),
    )
}

async function orphans(db: Kysely<DbSchema>, q: OrphanQuery): Promise<FileEntry[]> {
  const rows = await orphanRows(db, q.storedBefore)
    .$if(q.afterId !== undefined, (qb) => qb.where('files.id', '>', q.afterId as number))
    .orderBy('files.id')
    .limit(Math.max(Math.floor(q.limit), 0))
    .execute()
  return rows.map(toEntry)
}

/**
 * On PostgreSQL the file row is locked first: a save that references it at the same time holds
 * a key-share lock on it (its foreign key) until it commits, so the orphan check waits for that
 * save and then sees its reference. On SQLite the one conditional delete is the first statement,
 * so it runs under the write lock, one writer at a time.
 */
async function removeOrphan(
  trx: Kysely<DbSchema>,
  key: StorageKey,
  storedBefore: number,
): Promise<FileEntry | null> {
  if (isPostgres(trx))
    await trx.selectFrom('files').select('id').where('key', '=', key).forUpdate().execute()
  const row = await trx
    .deleteFrom('files')
    .where(
      'id',
      'in',
      orphanRows(trx, storedBefore).clearSelect().select('files.id').where('files.key', '=', key),
    )
    .returningAll()
    .executeTakeFirst()
  return row === undefined ? null : toEntry(row)
}

async function referencedKeys(db: Kysely<DbSchema>, id: string): Promise<StorageKey[]> {
  const rows = await db
    .selectFrom('documentFiles')
    .innerJoin('files', 'files.id', 'documentFiles.fileId')
    .select('files.key')
    .where('documentFiles.documentId', '=', id)
    .execute()
  return byteOrder(rows.map((r) => r.key))
}

/** Sorted by bytes of UTF-8, the same on every engine and locale. */
function byteOrder(keys: StorageKey[]): StorageKey[] {
  return keys.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
}

function toRecord(row: DocumentRow, keys: StorageKey[]): DocumentRecord {
  return {
    id: row.id,
    owner: row.owner ?? null,
    createdAt: Number(row.createdAt),
    savedAt: Number(row.savedAt),
    keys,
  }
}
