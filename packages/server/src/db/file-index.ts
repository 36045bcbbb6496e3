import { LRUCache } from 'lru-cache'
import type { Kysely } from '#kysely'
import { UeError } from '../shared/errors.js'
import type { Category, Page, StorageKey } from '../shared/types.js'
import { keyInByteOrder } from './byte-order.js'
import { guarded, isUniqueViolation } from './errors.js'
import { dayRange } from './file-day-counts.js'
import { isPostgres } from './identity.js'
import {
  type Anchor,
  countedPageQuery,
  countsQuery,
  dayCountsQuery,
  documentCountQuery,
  documentPageQuery,
  type Leg,
  type ListedRow,
  type ListingCount,
  pageQuery,
  rowAtQuery,
} from './listing-sql.js'
import { type QuerySteps, readAlone, readSnapshot, rowsOf } from './query-steps.js'
import type { DbSchema, FileRow } from './schema.js'
import type { SyncSnapshots } from './sqlite-snapshots.js'
import type {
  FileEntry,
  FileIndex,
  IndexedKey,
  ListedFile,
  ListQuery,
  NewFileEntry,
  Within,
} from './types.js'

/** Anchors remembered per process: enough for many clients paging at once, a few MB at most. */
const MAX_ANCHORS = 20_000
/** Rows of pages remembered per process (about 200 bytes each): a few thousand pages, ~10 MB. */
const MAX_PAGE_ROWS = 50_000

/** `snapshots`: where the database reads synchronously (SQLite), listings read through it. */
export function createFileIndex(db: Kysely<DbSchema>, snapshots?: SyncSnapshots): FileIndex {
  const anchors: Anchors = new LRUCache({ max: MAX_ANCHORS })
  const pages: Pages = new LRUCache({
    maxSize: MAX_PAGE_ROWS,
    sizeCalculation: (page) => Math.max(page.items.length, 1),
  })
  const remembered = { anchors, pages }
  const postgres = isPostgres(db)
  return {
    add: (entry, o) => {
      const within = o?.within
      return guarded(() => (within === undefined ? add(db, entry) : addWithin(db, entry, within)))
    },
    list: (q) =>
      // `IN ()` is a syntax error on PostgreSQL: no categories simply matches nothing.
      q.categories.length === 0
        ? Promise.resolve({ items: [], total: 0 })
        : guarded(async () => {
            if (q.document !== undefined) {
              const document = q.document
              return readSnapshot(db, snapshots, () => documentListing(postgres, q, document))
            }
            const at = pageAt(q)
            // Outside SQLite, a page this process holds is answered after one statement (the
            // count, alone) instead of three (start transaction, the count, commit).
            if (!snapshots && pages.has(pageKeyOf(at))) {
              const held = await readAlone(db, () => heldPage(postgres, pages, q, at))
              if (held !== undefined) return held
            }
            // On PostgreSQL, a first page or one whose anchor this process holds is one
            // statement instead of four (start transaction, the count, the page, commit).
            if (postgres && !snapshots) {
              const alone = await readAlone(db, () => pageAlone(remembered, q, at))
              if (alone !== undefined) return alone
            }
            return readSnapshot(db, snapshots, () => listing(postgres, remembered, q, at))
          }),
    get: (key) => guarded(() => get(db, key)),
    remove: (key, o) => {
      const within = o?.within
      return guarded(() =>
        within === undefined
          ? remove(db, key)
          : db.transaction().execute(async (trx) => {
              const removed = await removeReturning(trx, key)
              if (removed !== null) await within(trx, removed)
              return removed !== null
            }),
      )
    },
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

async function addWithin(
  db: Kysely<DbSchema>,
  entry: NewFileEntry,
  within: Within,
): Promise<FileEntry> {
  return db.transaction().execute(async (trx) => {
    const added = await add(trx, entry)
    await within(trx)
    return added
  })
}

/**
 * Per process: which row sits at an offset of a listing, as of one state of its counts
 * (`changes`), keyed by the listing and the offset.
 */
type Anchors = LRUCache<string, { anchor: Anchor; changes: string }>

/**
 * Per process: the rows of a page, as of one state of its counts (`changes`), keyed by the
 * listing, the offset and the size. Files are never updated in place, so equal `changes` mean
 * the very same rows; a page is served from here only after this snapshot's counts said so.
 */
type Pages = LRUCache<string, { items: readonly ListedFile[]; changes: string }>

/**
 * One page in O(page): the total comes from `file_counts`, the page is read from the row at
 * `start` onwards by (created_at, id), from the categories that hold any matching file. The first
 * page needs no anchor; the row after each page is remembered for the offset the client asks for
 * next (start + size), and count and page are read in one snapshot, whose `changes` must still be
 * the anchor's. On a miss (another node served the last page, or a file of this listing was added
 * or removed since) the row at `start` is found by walking a covering index from the nearer end,
 * in the same snapshot. A page read at the same `changes` before (the first page every editor
 * opens, or clients paging the same library) is answered from memory after the count alone.
 */
function* listing(
  postgres: boolean,
  { anchors, pages }: { anchors: Anchors; pages: Pages },
  q: ListQuery,
  at: PageAt,
): QuerySteps<Page<ListedFile>> {
  const { start, size } = at
  const { total, changes, legs } = yield* counted(postgres, q)
  if (size === 0 || start >= total) return { items: [], total }
  const seen = pages.get(pageKeyOf(at))
  if (seen !== undefined && seen.changes === changes) return { items: seen.items, total }
  const known = start === 0 ? undefined : anchors.get(anchorKeyOf(at.shape, start))
  const sameState = known !== undefined && known.changes === changes
  const present = legs.map((l) => l.category)
  let anchor: Anchor | undefined
  if (start > 0) {
    anchor = sameState
      ? known.anchor
      : yield* rowAt(postgres, { ...q, categories: present }, start, total)
    if (anchor === undefined) return { items: [], total }
    if (!sameState) anchors.set(anchorKeyOf(at.shape, start), { anchor, changes })
  }
  const rows = yield* rowsOf(pageQuery(postgres, q.owners, legs, q.exts ?? [], anchor, size + 1))
  return { items: remember({ anchors, pages }, at, rows, changes), total }
}

/**
 * PostgreSQL: the counts and the page in one statement (`countedPageQuery`), for a first page
 * or a page whose anchor this process holds. The page is read from the anchor before the counts
 * can say whether it still holds: when they say the listing changed since, the answer is
 * undefined and `listing` reads the page again (so does a page with no anchor held).
 */
function* pageAlone(
  remembered: { anchors: Anchors; pages: Pages },
  q: ListQuery,
  at: PageAt,
): QuerySteps<Page<ListedFile> | undefined> {
  const { start, size } = at
  const known = start === 0 ? undefined : remembered.anchors.get(anchorKeyOf(at.shape, start))
  if (size === 0 || (start > 0 && known === undefined)) return undefined
  const categories = [...new Set(q.categories)]
  const exts = q.exts ?? []
  const [read] = yield* rowsOf(
    countedPageQuery(scopesOf(q), q.owners, categories, exts, known?.anchor, size + 1),
  )
  const { total, changes } = countedFrom(read?.counts ?? [], categories, q.exts)
  if (start >= total) return { items: [], total }
  if (known !== undefined && known.changes !== changes) return undefined
  return { items: remember(remembered, at, read?.rows ?? [], changes), total }
}

/**
 * A page read at `changes` (up to size + 1 rows): the row after it is remembered as the anchor
 * of the next page, the page itself for the clients asking for it again; its items are returned.
 */
function remember(
  { anchors, pages }: { anchors: Anchors; pages: Pages },
  at: PageAt,
  rows: readonly ListedRow[],
  changes: string,
): readonly ListedFile[] {
  const next = rows[at.size]
  if (next !== undefined)
    anchors.set(anchorKeyOf(at.shape, at.start + at.size), { anchor: anchorOf(next), changes })
  const items = Object.freeze(rows.slice(0, at.size).map((row) => Object.freeze(toListed(row))))
  pages.set(pageKeyOf(at), { items, changes })
  return items
}

/** One document's files (`listImage&document=<id>`): count and page in one snapshot. */
function* documentListing(
  postgres: boolean,
  q: ListQuery,
  document: string,
): QuerySteps<Page<ListedFile>> {
  const exts = q.exts ?? []
  const categories = [...new Set(q.categories)]
  const [counted] = yield* rowsOf(
    documentCountQuery(postgres, q.owners, document, categories, exts),
  )
  const total = Number(counted?.n ?? 0)
  const start = wholeNumber(q.start)
  const size = wholeNumber(q.size)
  if (size === 0 || start >= total) return { items: [], total }
  const rows = yield* rowsOf(
    documentPageQuery(postgres, q.owners, document, categories, exts, start, size),
  )
  return { items: rows.map((row) => Object.freeze(toListed(row))), total }
}

/** The count, and the page if this process holds it as of that count; else undefined. */
function* heldPage(
  postgres: boolean,
  pages: Pages,
  q: ListQuery,
  at: PageAt,
): QuerySteps<Page<ListedFile> | undefined> {
  const { total, changes } = yield* counted(postgres, q)
  if (at.size === 0 || at.start >= total) return { items: [], total }
  const seen = pages.get(pageKeyOf(at))
  return seen !== undefined && seen.changes === changes ? { items: seen.items, total } : undefined
}

/** Which page of which listing a query asks for, worked out once per request. */
interface PageAt {
  shape: string
  start: number
  size: number
}

function pageAt(q: ListQuery): PageAt {
  return { shape: listingShape(q), start: wholeNumber(q.start), size: wholeNumber(q.size) }
}

/** The key of `Pages`. */
function pageKeyOf({ shape, start, size }: PageAt): string {
  return `${shape}\n${start}\n${size}`
}

/** The key of `Anchors`: the row at `offset` of the listing `shape`. */
function anchorKeyOf(shape: string, offset: number): string {
  return `${shape}\n${offset}`
}

function anchorOf(row: { createdAt: number | string; id: number | string }): Anchor {
  return { createdAt: Number(row.createdAt), id: Number(row.id) }
}

/** Which listing this is; lists in another order only make another key (a cache miss). */
function listingShape(q: ListQuery): string {
  return JSON.stringify([scopesOf(q), q.categories, q.exts ?? []])
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

interface Counted {
  total: number
  changes: string
  /** The categories that hold a matching file, in the order asked. */
  legs: Leg[]
}

/**
 * How many files match and the sum of their `changes`, from `file_counts`, and per category
 * whether its rows need the extension filter: not when every file it holds has a listed
 * extension, and then the page walks its index without reading a row it will not show.
 */
function* counted(postgres: boolean, q: ListQuery): QuerySteps<Counted> {
  const categories = [...new Set(q.categories)]
  const rows = yield* rowsOf(countsQuery(postgres, scopesOf(q), categories))
  return countedFrom(rows, categories, q.exts)
}

/** `counted` from the `file_counts` rows of the listing's scopes and `categories`. */
function countedFrom(
  rows: readonly ListingCount[],
  categories: readonly Category[],
  exts: readonly string[] | undefined,
): Counted {
  const listed = exts && exts.length > 0 ? new Set(exts) : undefined
  let total = 0
  let changes = 0
  const shown = new Map<string, number>()
  const unlisted = new Set<string>()
  for (const cell of perExtension(rows)) {
    if (listed && !listed.has(cell.ext)) {
      if (cell.n > 0) unlisted.add(cell.category)
      continue
    }
    total += cell.n
    changes += cell.changes
    shown.set(cell.category, (shown.get(cell.category) ?? 0) + cell.n)
  }
  const legs = categories
    .filter((c) => (shown.get(c) ?? 0) > 0)
    .map((category) => ({ category, byExt: unlisted.has(category) }))
  return { total, changes: String(changes), legs }
}

interface ExtensionCount {
  category: string
  ext: string
  n: number
  changes: number
}

/** The scopes' rows summed per category and extension; the `-` scope's files are taken away. */
function perExtension(rows: readonly ListingCount[]): Iterable<ExtensionCount> {
  const cells = new Map<string, ExtensionCount>()
  for (const row of rows) {
    const n = row.scope === '-' ? -Number(row.n) : Number(row.n)
    const key = `${row.category}\n${row.ext}`
    const cell = cells.get(key)
    if (cell === undefined)
      cells.set(key, { category: row.category, ext: row.ext, n, changes: Number(row.changes) })
    else {
      cell.n += n
      cell.changes += Number(row.changes)
    }
  }
  return cells.values()
}

/**
 * The (created_at, id) of the row at `offset` (< total), counted from whichever end is nearer:
 * the days of `file_day_counts` are summed from that end up to the day holding the row, and a
 * covering index is walked inside that day only, from the day's nearer boundary, so the walk is
 * bounded by half of one day's files.
 */
function* rowAt(
  postgres: boolean,
  q: ListQuery,
  offset: number,
  total: number,
): QuerySteps<Anchor | undefined> {
  const fromOldest = offset >= total / 2
  const exts = q.exts ?? []
  const target = fromOldest ? total - 1 - offset : offset
  const days = yield* rowsOf(dayCountsQuery(postgres, scopesOf(q), q.categories, exts, fromOldest))
  let before = 0
  for (const { day, n } of days) {
    const inDay = Number(n)
    if (before + inDay > target) {
      // Inside the day, too, the walk starts from its nearer boundary.
      const within = target - before
      const flip = within >= inDay / 2
      const [row] = yield* rowsOf(
        rowAtQuery(
          postgres,
          q.owners,
          q.categories,
          exts,
          flip ? inDay - 1 - within : within,
          flip ? !fromOldest : fromOldest,
          dayRange(Number(day)),
        ),
      )
      return row === undefined ? undefined : anchorOf(row)
    }
    before += inDay
  }
  return undefined
}

async function get(db: Kysely<DbSchema>, key: StorageKey): Promise<FileEntry | null> {
  const row = await db.selectFrom('files').selectAll().where('key', '=', key).executeTakeFirst()
  return row === undefined ? null : toEntry(row)
}

async function remove(db: Kysely<DbSchema>, key: StorageKey): Promise<boolean> {
  const { numDeletedRows } = await db.deleteFrom('files').where('key', '=', key).executeTakeFirst()
  return numDeletedRows > 0n
}

async function removeReturning(db: Kysely<DbSchema>, key: StorageKey): Promise<FileEntry | null> {
  const row = await db.deleteFrom('files').where('key', '=', key).returningAll().executeTakeFirst()
  return row === undefined ? null : toEntry(row)
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
function toListed(row: ListedRow): ListedFile {
  return {
    id: Number(row.id),
    key: row.key,
    originalName: row.originalName ?? '',
    createdAt: Number(row.createdAt),
  }
}

/** A file row as the index's entry (the documents repository reads the same rows). */
export function toEntry(row: FileRow): FileEntry {
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
