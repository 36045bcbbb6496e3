import type { Generated, Insertable, Kysely, Selectable } from '#kysely'
import { isPlainObject, PROTOTYPE_KEYS } from '../shared/plain-object.js'
import type { Page } from '../shared/types.js'
import { guarded } from './errors.js'
import { advanceIdentityPast, isPostgres } from './identity.js'
import {
  categoriesQuery,
  extraIdQuery,
  literalCountQuery,
  literalPageQuery,
  lowerQuery,
  termCountQuery,
  termPageQuery,
  termSearchQuery,
} from './material-search-sql.js'
import { dropTerms, dropTermsIn, moveTerms, reindexTerms, SHORT_KEYWORD } from './material-terms.js'
import { type QuerySteps, readAlone, readOne, readSnapshot, rowsOf } from './query-steps.js'
import type { CategoryRow, DbSchema, MaterialRow } from './schema.js'
import { restoreRows } from './sqlite-saved-rows.js'
import type { SyncSnapshots } from './sqlite-snapshots.js'

/** The largest id: ids are `integer` columns, 32-bit on PostgreSQL. */
export const MAX_ID = 2_147_483_647

export interface CategoryRecord {
  id: number
  name: string
  parentId: number | null
  order: number
  /** Milliseconds since the epoch. */
  createdAt: number
  updatedAt: number
}

export interface MaterialRecord {
  id: number
  name: string
  content: string
  categoryId: number | null
  thumbnail: string | null
  tags: string[]
  custom: Record<string, unknown>
  createdAt: number
  updatedAt: number
}

/** Without `id` a new id is given; with one, that row is created or replaced (upsert). */
type Input<T> = Omit<T, 'id' | 'createdAt' | 'updatedAt'> & {
  id?: number
  /** Default: kept from the existing row, else now. */
  createdAt?: number
  /** Default: now. */
  updatedAt?: number
}
export type CategoryInput = Input<CategoryRecord>
export type MaterialInput = Input<MaterialRecord>

export interface MaterialSearch {
  /** Only materials in these categories; absent means all (uncategorised ones included). */
  categoryIds?: readonly number[]
  /** A literal, case-insensitive (ASCII) substring of the name or a tag, or an exact id. */
  keyword?: string
  /** 1-based. */
  page: number
  pageSize: number
}

/**
 * Categories and materials in the metadata database. Portable SQL (SQLite and PostgreSQL); the
 * one dialect-specific step lives in identity.ts. The repository keeps rows; the rules (trees,
 * moves, sanitising) belong to the materials service.
 */
export interface MaterialRepository {
  /** Flat, ordered by (order, id); the service builds the tree. */
  categories(): Promise<CategoryRecord[]>
  getCategory(id: number): Promise<CategoryRecord | null>
  saveCategory(input: CategoryInput): Promise<CategoryRecord>
  /**
   * Saves these categories in one statement per kind of save (with an id or not, bringing
   * `createdAt` or not), for an import, whose categories are many: a parent must be stored
   * before, not in the same call.
   */
  saveCategories(inputs: readonly CategoryInput[]): Promise<void>
  /** Deletes these categories in one statement; their children and materials must be gone. */
  deleteCategories(ids: readonly number[]): Promise<number>
  /** Gives the direct children of `from` the parent `to` (null: top level). */
  moveChildren(from: number, to: number | null): Promise<number>

  /** Newest first, stable: created_at desc, id desc. */
  search(q: MaterialSearch): Promise<Page<MaterialRecord>>
  /** Every material, by id. */
  allMaterials(): Promise<MaterialRecord[]>
  getMaterial(id: number): Promise<MaterialRecord | null>
  /** Those of these ids that exist, by id. */
  getMaterials(ids: readonly number[]): Promise<MaterialRecord[]>
  saveMaterial(input: MaterialInput): Promise<MaterialRecord>
  /**
   * Saves each as `saveMaterial` would, in one transaction, a batch of rows per statement (an
   * import or a large fill). The ids given must be distinct. Answers the saved ids in no set order.
   */
  saveMaterials(inputs: readonly MaterialInput[]): Promise<number[]>
  /**
   * Writes the demo materials from rows saved with the code (sqlite-demo.generated.ts), on
   * SQLite, when they were saved from the demo materials of `digest` and nothing is stored yet:
   * how many categories and materials it wrote; null (nothing written) otherwise, for the caller
   * to import them. Not inside `transaction`.
   */
  restoreDemo(digest: string): Promise<{ categories: number; materials: number } | null>
  deleteMaterial(id: number): Promise<boolean>
  countMaterials(categoryIds: readonly number[]): Promise<number>
  /** Moves the materials of these categories to `to` (null: uncategorised). */
  moveMaterials(from: readonly number[], to: number | null): Promise<number>
  deleteMaterialsIn(categoryIds: readonly number[]): Promise<number>

  /** Runs `work` in one transaction; inside it, `transaction` simply runs `work` again. */
  transaction<T>(work: (repo: MaterialRepository) => Promise<T>): Promise<T>
}

/** `snapshots`: where the database reads synchronously (SQLite), searches read through it. */
export function createMaterialRepository(
  db: Kysely<DbSchema>,
  snapshots?: SyncSnapshots,
): MaterialRepository {
  // Not `guarded`: the work's own errors pass through as they are. Inside a transaction, reads
  // go through it: a snapshot would wait for the connection the transaction holds.
  return repositoryOver(
    db,
    (work) => db.transaction().execute((trx) => work(repositoryOver(trx))),
    snapshots,
  )
}

type Transact = <T>(work: (repo: MaterialRepository) => Promise<T>) => Promise<T>

function repositoryOver(
  db: Kysely<DbSchema>,
  transact?: Transact,
  snapshots?: SyncSnapshots,
): MaterialRepository {
  const postgres = isPostgres(db)
  const repo: MaterialRepository = {
    categories: () =>
      guarded(() => readOne(db, snapshots, categoriesQuery()).then((rows) => rows.map(toCategory))),
    getCategory: (id) => guarded(() => getCategory(db, id)),
    saveCategory: (input) => guarded(() => saveCategory(db, input)),
    saveCategories: (inputs) =>
      guarded(async () => {
        await saveRows(db, 'categories', inputs.map(categorySave))
      }),
    deleteCategories: (ids) =>
      guarded(async () => {
        if (ids.length === 0) return 0
        const r = await db.deleteFrom('categories').where('id', 'in', ids).executeTakeFirst()
        return Number(r.numDeletedRows)
      }),
    moveChildren: (from, to) =>
      guarded(async () => {
        const r = await db
          .updateTable('categories')
          .set({ parentId: to, updatedAt: Date.now() })
          .where('parentId', '=', from)
          .executeTakeFirst()
        return Number(r.numUpdatedRows)
      }),
    search: (q) =>
      q.categoryIds !== undefined && q.categoryIds.length === 0
        ? Promise.resolve({ items: [], total: 0 })
        : guarded(() => {
            const term = postgres ? termAlone(q) : undefined
            return term === undefined
              ? readSnapshot(db, snapshots, () => searching(postgres, q))
              : readAlone(db, () => searchTermAlone(q, term))
          }),
    allMaterials: () =>
      guarded(async () => {
        const rows = await db.selectFrom('materials').selectAll().orderBy('id').execute()
        return rows.map(toMaterial)
      }),
    getMaterial: (id) => guarded(() => getMaterial(db, id)),
    getMaterials: (ids) => guarded(() => getMaterials(db, ids)),
    saveMaterial: (input) => guarded(() => atomically(db, (tx) => saveMaterial(tx, input))),
    saveMaterials: (inputs) => guarded(() => atomically(db, (tx) => saveMaterials(tx, inputs))),
    restoreDemo: (digest) =>
      guarded(async () => {
        if (postgres) return null
        // Loaded only on the start that seeds.
        const { SQLITE_DEMO } = await import('./sqlite-demo.generated.js')
        if (SQLITE_DEMO.digest !== digest) return null
        if (!(await restoreRows(db, SQLITE_DEMO, Date.now()))) return null
        const count = (table: string) =>
          SQLITE_DEMO.tables.find((t) => t.table === table)?.rows.length ?? 0
        return { categories: count('categories'), materials: count('materials') }
      }),
    deleteMaterial: (id) =>
      guarded(() =>
        atomically(db, async (tx) => {
          await dropTerms(tx, [id])
          const r = await tx.deleteFrom('materials').where('id', '=', id).executeTakeFirst()
          return r.numDeletedRows > 0n
        }),
      ),
    countMaterials: (ids) =>
      guarded(async () => {
        if (ids.length === 0) return 0
        const { n } = await db
          .selectFrom('materials')
          .where('categoryId', 'in', ids)
          .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
          .executeTakeFirstOrThrow()
        return Number(n)
      }),
    moveMaterials: (from, to) =>
      guarded(async () => {
        if (from.length === 0) return 0
        return atomically(db, async (tx) => {
          const r = await tx
            .updateTable('materials')
            .set({ categoryId: to, updatedAt: Date.now() })
            .where('categoryId', 'in', from)
            .executeTakeFirst()
          await moveTerms(tx, from, to)
          return Number(r.numUpdatedRows)
        })
      }),
    deleteMaterialsIn: (ids) =>
      guarded(async () => {
        if (ids.length === 0) return 0
        return atomically(db, async (tx) => {
          await dropTermsIn(tx, ids)
          const r = await tx
            .deleteFrom('materials')
            .where('categoryId', 'in', ids)
            .executeTakeFirst()
          return Number(r.numDeletedRows)
        })
      }),
    transaction: (work) => (transact ? transact(work) : work(repo)),
  }
  return repo
}

async function getCategory(db: Kysely<DbSchema>, id: number): Promise<CategoryRecord | null> {
  const row = await db.selectFrom('categories').selectAll().where('id', '=', id).executeTakeFirst()
  return row === undefined ? null : toCategory(row)
}

async function saveCategory(db: Kysely<DbSchema>, c: CategoryInput): Promise<CategoryRecord> {
  const [row] = await saveRows(db, 'categories', [categorySave(c)])
  return toCategory(row as CategoryRow)
}

function categorySave(c: CategoryInput): RowSave<'categories'> {
  return { stamp: c, columns: { name: c.name, parentId: c.parentId, sortOrder: c.order } }
}

async function getMaterial(db: Kysely<DbSchema>, id: number): Promise<MaterialRecord | null> {
  const row = await db.selectFrom('materials').selectAll().where('id', '=', id).executeTakeFirst()
  return row === undefined ? null : toMaterial(row)
}

/** Rows per statement when many are read or saved: well under both engines' parameter limits. */
const BATCH = 500

async function getMaterials(
  db: Kysely<DbSchema>,
  ids: readonly number[],
): Promise<MaterialRecord[]> {
  const found: MaterialRecord[] = []
  for (let start = 0; start < ids.length; start += BATCH) {
    const rows = await db
      .selectFrom('materials')
      .selectAll()
      .where('id', 'in', ids.slice(start, start + BATCH))
      .execute()
    found.push(...rows.map(toMaterial))
  }
  return found.sort((a, b) => a.id - b.id)
}

async function saveMaterial(db: Kysely<DbSchema>, m: MaterialInput): Promise<MaterialRecord> {
  const [row] = await saveRows(db, 'materials', [{ stamp: m, columns: materialColumns(m) }])
  const saved = toMaterial(row as MaterialRow)
  await reindexTerms(db, [saved.id], m.id === undefined ? [] : [saved.id])
  return saved
}

async function saveMaterials(
  db: Kysely<DbSchema>,
  inputs: readonly MaterialInput[],
): Promise<number[]> {
  const given = idsGiven(inputs)
  if (new Set(given).size !== given.length) throw new Error('saveMaterials: an id appears twice')
  // The saves with ids go first, so a later batch's id never lands on a row an earlier batch
  // made new (saveRows keeps that promise within one batch).
  const ordered = [
    ...inputs.filter((m) => m.id !== undefined),
    ...inputs.filter((m) => m.id === undefined),
  ]
  const ids: number[] = []
  for (let start = 0; start < ordered.length; start += BATCH) {
    const batch = ordered.slice(start, start + BATCH)
    const rows = await saveRows(
      db,
      'materials',
      batch.map((m) => ({ stamp: m, columns: materialColumns(m) })),
    )
    const saved = rows.map((r) => Number(r.id))
    await reindexTerms(db, saved, idsGiven(batch))
    ids.push(...saved)
  }
  return ids
}

/** The ids these saves name (the others get new ones). */
function idsGiven(inputs: readonly MaterialInput[]): number[] {
  return inputs.flatMap((m) => (m.id === undefined ? [] : [m.id]))
}

/** The columns a material's save writes besides its id and times. */
function materialColumns(m: MaterialInput) {
  return {
    name: m.name,
    content: m.content,
    categoryId: m.categoryId,
    thumbnail: m.thumbnail,
    tags: JSON.stringify(m.tags),
    tagsSearch: m.tags.join('\n'),
    custom: JSON.stringify(m.custom),
  }
}

type SavedTable = 'categories' | 'materials'

/** The columns `saveRows` writes itself; the others are the table's own. */
interface SavedColumns {
  id: Generated<number>
  createdAt: number
  updatedAt: number
  [column: string]: unknown
}

/** When a save happened and which row it names; what an import brings along. */
interface SaveStamp {
  id?: number | undefined
  createdAt?: number | undefined
  updatedAt?: number | undefined
}

interface RowSave<T extends SavedTable> {
  stamp: SaveStamp
  columns: Omit<Insertable<DbSchema[T]>, 'id' | 'createdAt' | 'updatedAt'>
}

/**
 * Writes new rows, or with an explicit id the row of that id (import is idempotent by id),
 * whose `createdAt` stays unless the save brings one. Only a save with an id is an upsert: a new
 * row must never replace an existing one, hence advanceIdentityPast after the explicit ids and
 * before the new rows, which so never take an id given in the same call. One statement for
 * each kind of save present: upserts keeping `createdAt`, upserts bringing it, new rows. The
 * saved rows come back in no set order.
 */
async function saveRows<T extends SavedTable>(
  db: Kysely<DbSchema>,
  table: T,
  saves: readonly RowSave<T>[],
): Promise<Selectable<DbSchema[T]>[]> {
  const now = Date.now()
  // One statement for either table: the callers' columns are checked against their table.
  const generic = db as unknown as Kysely<Record<SavedTable, SavedColumns>>
  const write = async (kind: readonly RowSave<T>[]) => {
    const first = kind[0]?.stamp
    if (first === undefined) return []
    const values = kind.map(({ stamp, columns }) => ({
      ...(columns as Record<string, unknown>),
      updatedAt: stamp.updatedAt ?? now,
      ...(stamp.id === undefined ? {} : { id: stamp.id }),
      createdAt: stamp.createdAt ?? now,
    }))
    const updated = Object.keys(values[0] ?? {}).filter(
      (c) => c !== 'id' && (c !== 'createdAt' || first.createdAt !== undefined),
    )
    return generic
      .insertInto(table as SavedTable)
      .values(values)
      .$if(first.id !== undefined, (qb) =>
        qb.onConflict((oc) =>
          oc
            .column('id')
            .doUpdateSet((eb) =>
              Object.fromEntries(updated.map((c) => [c, eb.ref(`excluded.${c}` as 'excluded.id')])),
            ),
        ),
      )
      .returningAll()
      .execute()
  }
  const given = saves.filter((s) => s.stamp.id !== undefined)
  const saved = [
    ...(await write(given.filter((s) => s.stamp.createdAt === undefined))),
    ...(await write(given.filter((s) => s.stamp.createdAt !== undefined))),
  ]
  const highest = Math.max(0, ...given.map((s) => s.stamp.id ?? 0))
  if (highest > 0) await advanceIdentityPast(db, table, highest)
  saved.push(...(await write(saves.filter((s) => s.stamp.id === undefined))))
  return saved as Selectable<DbSchema[T]>[]
}

/** Runs `work` in a transaction, or in the one `db` already is. */
function atomically<T>(
  db: Kysely<DbSchema>,
  work: (tx: Kysely<DbSchema>) => Promise<T>,
): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work)
}

/**
 * Keywords of up to two characters (and none) are answered from the maintained terms and their
 * counts; longer ones by the literal match, which a trigram index narrows down first. Both give
 * exactly what `lower(name or tags) LIKE %keyword%`, or the exact id, matches.
 */
function* searching(postgres: boolean, q: MaterialSearch): QuerySteps<Page<MaterialRecord>> {
  const keyword = q.keyword ?? ''
  const exactId = exactIdOf(keyword)
  const term = !postgres
    ? asciiLower(keyword)
    : uncased(keyword)
      ? keyword
      : ((yield* rowsOf(lowerQuery(keyword)))[0]?.term ?? '')
  return Array.from(term).length <= SHORT_KEYWORD
    ? yield* searchTerm(postgres, q, term, exactId)
    : yield* searchLiteral(postgres, q, keyword, exactId)
}

/** The material id a keyword of digits names as well, if it can be one. */
function exactIdOf(keyword: string): number | undefined {
  const id = /^\d{1,10}$/.test(keyword) ? Number(keyword) : Number.NaN
  return id >= 1 && id <= MAX_ID ? id : undefined
}

/**
 * On PostgreSQL, the term of a search that one statement answers (`termSearchQuery`): a short
 * keyword (or none) without case, so not to be folded by the database first, that names no id.
 */
function termAlone(q: MaterialSearch): string | undefined {
  const keyword = q.keyword ?? ''
  const fits =
    q.page >= 1 &&
    q.pageSize >= 1 &&
    Array.from(keyword).length <= SHORT_KEYWORD &&
    uncased(keyword) &&
    exactIdOf(keyword) === undefined
  return fits ? keyword : undefined
}

function* searchTermAlone(q: MaterialSearch, term: string): QuerySteps<Page<MaterialRecord>> {
  const offset = (q.page - 1) * q.pageSize
  const [read] = yield* rowsOf(termSearchQuery(term, q.categoryIds, offset, q.pageSize))
  const total = Number(read?.n ?? 0)
  return { items: offset >= total ? [] : (read?.rows ?? []).map(toMaterial), total }
}

/**
 * Text without a letter that has case (CJK, digits, punctuation, none at all): `lower()` leaves
 * it as it is in every locale, so PostgreSQL need not be asked.
 */
function uncased(text: string): boolean {
  return text.toLowerCase() === text && text.toUpperCase() === text
}

/** What SQLite's built-in `lower()` does: it folds ASCII only. */
function asciiLower(text: string): string {
  return text.replace(/[A-Z]+/g, (upper) => upper.toLowerCase())
}

function* searchTerm(
  postgres: boolean,
  q: MaterialSearch,
  term: string,
  exactId: number | undefined,
): QuerySteps<Page<MaterialRecord>> {
  const keys = q.categoryIds
  const [counted] = yield* rowsOf(termCountQuery(postgres, term, keys))
  let total = Number(counted?.n ?? 0)
  // The exact id matches as well, unless its text already does.
  const [byId] =
    exactId === undefined ? [] : yield* rowsOf(extraIdQuery(postgres, exactId, term, keys))
  if (byId !== undefined) total += 1
  const offset = (q.page - 1) * q.pageSize
  if (q.pageSize < 1 || offset >= total) return { items: [], total }
  const alsoId = byId === undefined ? undefined : Number(byId.id)
  const rows = yield* rowsOf(termPageQuery(postgres, term, keys, alsoId, offset, q.pageSize))
  return { items: rows.map(toMaterial), total }
}

function* searchLiteral(
  postgres: boolean,
  q: MaterialSearch,
  keyword: string,
  exactId: number | undefined,
): QuerySteps<Page<MaterialRecord>> {
  const [counted] = yield* rowsOf(literalCountQuery(postgres, keyword, q.categoryIds, exactId))
  const total = Number(counted?.total ?? 0)
  const offset = (q.page - 1) * q.pageSize
  if (q.pageSize < 1 || offset >= total) return { items: [], total }
  const rows = yield* rowsOf(
    literalPageQuery(postgres, keyword, q.categoryIds, exactId, offset, q.pageSize),
  )
  return { items: rows.map(toMaterial), total }
}

function toCategory(row: CategoryRow): CategoryRecord {
  return {
    id: Number(row.id),
    name: row.name,
    parentId: row.parentId === null ? null : Number(row.parentId),
    order: Number(row.sortOrder),
    createdAt: Number(row.createdAt),
    updatedAt: Number(row.updatedAt),
  }
}

function toMaterial(row: MaterialRow): MaterialRecord {
  const tags = parseJson(row.tags)
  const custom = parseJson(row.custom)
  return {
    id: Number(row.id),
    name: row.name,
    content: row.content,
    categoryId: row.categoryId === null ? null : Number(row.categoryId),
    thumbnail: row.thumbnail,
    tags: Array.isArray(tags) ? tags.filter((t): t is string => typeof t === 'string') : [],
    custom: isPlainObject(custom) ? custom : {},
    createdAt: Number(row.createdAt),
    updatedAt: Number(row.updatedAt),
  }
}

// A key can only be one of PROTOTYPE_KEYS if it is written out or escaped in the text.
const MAYBE_PROTOTYPE_KEY = /__proto__|constructor|prototype|\\u/

/** Rows written by older versions or by hand may hold anything: never let a key reach a prototype. */
function parseJson(text: string): unknown {
  try {
    // A reviver makes JSON.parse several times slower; most texts need none.
    if (!MAYBE_PROTOTYPE_KEY.test(text)) return JSON.parse(text)
    return JSON.parse(text, (key, value) => (PROTOTYPE_KEYS.has(key) ? undefined : value))
  } catch {
    return null
  }
}
