import { type Kysely, sql } from 'kysely'
import { LRUCache } from 'lru-cache'
import { UeError } from '../shared/errors.js'
import type { Category, StorageKey } from '../shared/types.js'
import { keyInByteOrder } from './byte-order.js'
import { guarded, isUniqueViolation } from './errors.js'
import { isPostgres } from './identity.js'
import type { DbSchema, FileRow } from './schema.js'
import type { FileEntry, FileIndex, IndexedKey, ListQuery, NewFileEntry } from './types.js'

/** Anchors remembered per process: enough for many clients paging at once, a few MB at most. */
const MAX_ANCHORS = 20_000

export function createFileIndex(db: Kysely<DbSchema>): FileIndex {
  const anchors: Anchors = new LRUCache({ max: MAX_ANCHORS })
  return {
    add: (entry) => guarded(() => add(db, entry)),
    list: (q) => guarded(() => list(db, anchors, q)),
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

/**
 * Per process: which row sits at an offset of a listing, as of one state of its counts
 * (`changes`), keyed by the listing and the offset.
 */
type Anchors = LRUCache<string, { anchor: Anchor; changes: string }>
interface Anchor {
  createdAt: number
  id: number
}

/**
 * One page in O(page): the total comes from `file_counts`, the page is read from the row at
 * `start` onwards by (created_at, id). The first page needs no anchor; the row after each page
 * is remembered for the offset the client asks for next (start + size), and count and page come
 * back in one statement, so one snapshot, whose `changes` must still be the anchor's. On a miss
 * (another node served the last page, or a file of this listing was added or removed since) the
 * row at `start` is found by walking a covering index from the nearer end, in one snapshot with
 * the count and the page.
 */
async function list(
  db: Kysely<DbSchema>,
  anchors: Anchors,
  q: ListQuery,
): Promise<{ items: FileEntry[]; total: number }> {
  // `IN ()` is a syntax error on PostgreSQL: no categories simply matches nothing.
  if (q.categories.length === 0) return { items: [], total: 0 }
  const start = wholeNumber(q.start)
  const size = wholeNumber(q.size)
  if (size === 0) return { items: [], total: (await counted(db, q)).total }
  const shape = listingShape(q)
  const remember = (offset: number, anchor: Anchor, changes: string) =>
    anchors.set(`${shape}\n${offset}`, { anchor, changes })
  const answer = (rows: FileRow[], total: number, changes: string) => {
    const next = rows[size]
    if (next !== undefined) remember(start + size, anchorOf(next), changes)
    return { items: rows.slice(0, size).map(toEntry), total }
  }

  const known = anchors.get(`${shape}\n${start}`)
  if (start === 0 || known !== undefined) {
    const { total, changes, rows } = await countedPage(db, q, known?.anchor, size + 1)
    if (start === 0 || changes === known?.changes)
      return start >= total ? { items: [], total } : answer(rows, total, changes)
  }
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (tx) => {
      const { total, changes } = await counted(tx, q)
      if (start >= total) return { items: [], total }
      const anchor = await rowAt(tx, q, start, total)
      if (anchor === undefined) return { items: [], total }
      remember(start, anchor, changes)
      return answer(await pageFrom(tx, q, anchor, size + 1).execute(), total, changes)
    })
}

function anchorOf(row: FileRow): Anchor {
  return { createdAt: Number(row.createdAt), id: Number(row.id) }
}

function listingShape(q: ListQuery): string {
  return JSON.stringify([scopesOf(q), [...q.categories].sort(), [...(q.exts ?? [])].sort()])
}

/** Scopes of `file_counts` (see file-counts.ts); every owned file is every file minus unowned. */
function scopesOf(q: ListQuery): string[] {
  const owners = q.owners ?? { kind: 'all' }
  return owners.kind === 'user'
    ? [`u:${owners.user}`]
    : owners.kind === 'owned'
      ? ['*', '-']
      : ['*']
}

function countsOf(db: Kysely<DbSchema>, q: ListQuery) {
  const exts = q.exts ?? []
  return db
    .selectFrom('fileCounts')
    .where('scope', 'in', scopesOf(q))
    .where('category', 'in', q.categories)
    .$if(exts.length > 0, (qb) => qb.where('ext', 'in', exts))
    .select([
      sql<string | number | null>`sum(case when scope = '-' then -n else n end)`.as('total'),
      sql<string | number | null>`sum(changes)`.as('changes'),
    ])
}

async function counted(
  db: Kysely<DbSchema>,
  q: ListQuery,
): Promise<{ total: number; changes: string }> {
  const row = await countsOf(db, q).executeTakeFirstOrThrow()
  return { total: Number(row.total ?? 0), changes: String(row.changes ?? 0) }
}

/** The count and up to `limit` rows from `anchor` (absent: from the newest) in one statement. */
async function countedPage(
  db: Kysely<DbSchema>,
  q: ListQuery,
  anchor: Anchor | undefined,
  limit: number,
): Promise<{ total: number; changes: string; rows: FileRow[] }> {
  const joined = await db
    .selectFrom(countsOf(db, q).as('c'))
    .leftJoin(pageFrom(db, q, anchor, limit).as('p'), (join) => join.onTrue())
    .selectAll('p')
    .select(['c.total', 'c.changes'])
    .orderBy('p.createdAt', 'desc')
    .orderBy('p.id', 'desc')
    .execute()
  const first = joined[0]
  return {
    total: Number(first?.total ?? 0),
    changes: String(first?.changes ?? 0),
    rows: joined.filter((r) => r.id !== null) as FileRow[],
  }
}

function matching(
  db: Kysely<DbSchema>,
  q: ListQuery,
  categories: readonly Category[],
  steer = false,
) {
  const owners = q.owners ?? { kind: 'all' }
  const exts = q.exts ?? []
  const column = (name: 'category' | 'ext') =>
    steer && !isPostgres(db) ? sql<string>`+${sql.ref(name)}` : sql<string>`${sql.ref(name)}`
  return db
    .selectFrom('files')
    .$if(owners.kind === 'user', (qb) => qb.where('owner', '=', (owners as { user: string }).user))
    .$if(owners.kind === 'owned', (qb) => qb.where('owner', 'is not', null))
    .$if(categories.length === 1, (qb) => qb.where('category', '=', categories[0] as Category))
    .$if(categories.length > 1, (qb) => qb.where(column('category'), 'in', categories))
    .$if(exts.length > 0, (qb) => qb.where(column('ext'), 'in', exts))
}

/**
 * The (created_at, id) of the row at `offset` (< total), walking a covering index from
 * whichever end is nearer, so a jump near the end costs as little as one near the start: one
 * category walks `(category, created_at, id, ext, owner)`, several the `(created_at, id, ...)`
 * or `(owner, created_at, id, ...)` one.
 */
async function rowAt(
  db: Kysely<DbSchema>,
  q: ListQuery,
  offset: number,
  total: number,
): Promise<Anchor | undefined> {
  const fromEnd = offset >= total / 2
  const direction = fromEnd ? 'asc' : 'desc'
  const row = await matching(db, q, q.categories, true)
    .select(['createdAt', 'id'])
    .orderBy('createdAt', direction)
    .orderBy('id', direction)
    .limit(1)
    .offset(fromEnd ? total - 1 - offset : offset)
    .executeTakeFirst()
  return row === undefined ? undefined : { createdAt: Number(row.createdAt), id: Number(row.id) }
}

/**
 * Up to `limit` rows from `anchor` on, newest first: one index range per category, merged.
 */
function pageFrom(db: Kysely<DbSchema>, q: ListQuery, anchor: Anchor | undefined, limit: number) {
  // A category named twice must not give its rows twice (IN would not).
  const parts = [...new Set(q.categories)].map((category, i) =>
    db
      .selectFrom(
        matching(db, q, [category])
          .$if(anchor !== undefined, (qb) =>
            qb.where((eb) =>
              eb(
                eb.refTuple('createdAt', 'id'),
                '<=',
                eb.tuple(anchor?.createdAt ?? 0, anchor?.id ?? 0),
              ),
            ),
          )
          .selectAll()
          .orderBy('createdAt', 'desc')
          .orderBy('id', 'desc')
          .limit(limit)
          .as(`c${i}`),
      )
      .selectAll(),
  )
  const [first, ...rest] = parts as [(typeof parts)[number], ...typeof parts]
  return rest
    .reduce((union, part) => union.unionAll(part), first)
    .orderBy('createdAt', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
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
