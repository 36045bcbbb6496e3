import type { Kysely } from 'kysely'
import { UeError } from '../shared/errors.js'
import type { StorageKey } from '../shared/types.js'
import { keyInByteOrder } from './byte-order.js'
import { guarded, isUniqueViolation } from './errors.js'
import type { DbSchema, FileRow } from './schema.js'
import type { FileEntry, FileIndex, IndexedKey, ListQuery, NewFileEntry } from './types.js'

export function createFileIndex(db: Kysely<DbSchema>): FileIndex {
  return {
    add: (entry) => guarded(() => add(db, entry)),
    list: (q) => guarded(() => list(db, q)),
    get: (key) => guarded(() => get(db, key)),
    remove: (key) => guarded(() => remove(db, key)),
    usage: (owner) => guarded(() => usage(db, owner)),
    keysAfter: (after, limit) => guarded(() => keysAfter(db, after, limit)),
  }
}

async function add(db: Kysely<DbSchema>, entry: NewFileEntry): Promise<FileEntry> {
  const row = await db
    .insertInto('files')
    .values({
      key: entry.key,
      category: entry.category,
      originalName: entry.originalName,
      ext: entry.ext,
      size: entry.size,
      mime: entry.mime,
      sha256: entry.sha256,
      createdAt: entry.createdAt ?? Date.now(),
      owner: entry.owner ?? null,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
    .catch((cause: unknown) => {
      if (!isUniqueViolation(cause)) throw cause
      throw new UeError('UE_INDEX_FAILED', { detail: 'key already indexed', cause })
    })
  return toEntry(row)
}

async function list(
  db: Kysely<DbSchema>,
  q: ListQuery,
): Promise<{ items: FileEntry[]; total: number }> {
  // `IN ()` is a syntax error on PostgreSQL: no categories simply matches nothing.
  if (q.categories.length === 0) return { items: [], total: 0 }
  const exts = q.exts ?? []
  const owners = q.owners ?? { kind: 'all' }
  const matches = db
    .selectFrom('files')
    .$if(owners.kind === 'user', (qb) => qb.where('owner', '=', (owners as { user: string }).user))
    .$if(owners.kind === 'owned', (qb) => qb.where('owner', 'is not', null))
    .where('category', 'in', q.categories)
    .$if(exts.length > 0, (qb) => qb.where('ext', 'in', exts))

  const { total } = await matches
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('total'))
    .executeTakeFirstOrThrow()
  const count = Number(total)
  const start = wholeNumber(q.start)
  const size = wholeNumber(q.size)
  if (size === 0 || start >= count) return { items: [], total: count }

  const rows = await matches
    .selectAll()
    .orderBy('createdAt', 'desc')
    .orderBy('id', 'desc')
    .limit(size)
    .offset(start)
    .execute()
  return { items: rows.map(toEntry), total: count }
}

async function get(db: Kysely<DbSchema>, key: StorageKey): Promise<FileEntry | null> {
  const row = await db.selectFrom('files').selectAll().where('key', '=', key).executeTakeFirst()
  return row === undefined ? null : toEntry(row)
}

async function remove(db: Kysely<DbSchema>, key: StorageKey): Promise<boolean> {
  const { numDeletedRows } = await db.deleteFrom('files').where('key', '=', key).executeTakeFirst()
  return numDeletedRows > 0n
}

async function usage(db: Kysely<DbSchema>, owner: string): Promise<number> {
  const { bytes } = await db
    .selectFrom('files')
    .where('owner', '=', owner)
    .select((eb) => eb.fn.sum<number | string | bigint | null>('size').as('bytes'))
    .executeTakeFirstOrThrow()
  return Number(bytes ?? 0)
}

async function keysAfter(
  db: Kysely<DbSchema>,
  after: StorageKey | null,
  limit: number,
): Promise<IndexedKey[]> {
  const key = keyInByteOrder(db)
  const rows = await db
    .selectFrom('files')
    .select(['key', 'size', 'createdAt'])
    .$if(after !== null, (qb) => qb.where(key, '>', after as string))
    .orderBy(key)
    .limit(wholeNumber(limit))
    .execute()
  return rows.map((r) => ({
    key: r.key,
    size: Number(r.size ?? 0),
    createdAt: Number(r.createdAt),
  }))
}

// Drivers disagree on nulls and big integers (pg returns bigint columns as strings).
function toEntry(row: FileRow): FileEntry {
  return {
    id: Number(row.id),
    key: row.key,
    category: row.category,
    originalName: row.originalName ?? '',
    ext: row.ext ?? '',
    size: Number(row.size ?? 0),
    mime: row.mime ?? '',
    sha256: row.sha256 ?? '',
    createdAt: Number(row.createdAt),
    owner: row.owner ?? null,
  }
}

function wholeNumber(n: number): number {
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0
}
