import Database from 'better-sqlite3'
import { CamelCasePlugin, type Insertable, Kysely, SqliteDialect } from 'kysely'
import pg from 'pg'
import type { MaterialRepository } from '../src/db/material-repo.js'
import { type IndexConfig, openMetadataStore } from '../src/db/open.js'
import type { DbSchema, FilesTable } from '../src/db/schema.js'
import type { StorageKey } from '../src/shared/types.js'

/** Where a population goes: an SQLite file, or a database of the run's PostgreSQL cluster. */
export type IndexTarget = { driver: 'sqlite'; file: string } | { driver: 'postgres'; url: string }

/** The `index` section of the measured server's configuration for `target`. */
export function indexConfig(target: IndexTarget): IndexConfig {
  if (target.driver === 'sqlite') return target
  // UEDITOR_DATABASE_PREPARED_STATEMENTS=false in the bench's environment: the A/B of named statements.
  const preparedStatements = process.env.UEDITOR_DATABASE_PREPARED_STATEMENTS !== 'false'
  return { ...target, poolSize: 10, preparedStatements }
}

// Each population is inserted in batches so no loop runs unbounded and progress is visible.
const FILE_BATCH = 20_000
// Nine columns a row: well under SQLite's 32,766 bound parameters a statement.
const ROWS_PER_STATEMENT = 1_000
const MATERIAL_BATCH = 2_000
// Fixed creation times (one second apart) so every run pages through the same order.
const EPOCH = Date.UTC(2024, 0, 1)

/**
 * Grows the image index at `target` from `from` to `to` rows owned by `owner`: the index
 * layer's migrations make the schema, then multi-row inserts, one transaction per batch (the
 * index's own `add`, a statement and a commit per row, would take most of an hour at 1M).
 * The listing scenario checks that the server counts exactly these rows before it measures.
 */
export async function addImages(
  target: IndexTarget,
  owner: string,
  from: number,
  to: number,
): Promise<void> {
  const store = await openMetadataStore(indexConfig(target))
  await store.migrate().finally(() => store.close())
  if (target.driver === 'sqlite') await addSqliteImages(target.file, owner, from, to)
  else await addPostgresImages(target.url, owner, from, to)
}

async function addSqliteImages(file: string, owner: string, from: number, to: number) {
  const db = new Kysely<DbSchema>({
    dialect: new SqliteDialect({ database: new Database(file) }),
    plugins: [new CamelCasePlugin()],
  })
  try {
    for (let start = from; start < to; start += FILE_BATCH) {
      const end = Math.min(to, start + FILE_BATCH)
      await db.transaction().execute(async (trx) => {
        for (let i = start; i < end; i += ROWS_PER_STATEMENT) {
          const rows = Array.from({ length: Math.min(ROWS_PER_STATEMENT, end - i) }, (_, k) =>
            imageRow(i + k, owner),
          )
          await trx.insertInto('files').values(rows).execute()
        }
      })
    }
  } finally {
    await db.destroy()
  }
}

// Each column of a batch is one array parameter, unnested into rows by the server.
const UNNEST_INSERT = `
  insert into files (key, category, original_name, ext, size, mime, sha256, created_at, owner)
  select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[],
                       $6::text[], $7::text[], $8::bigint[], $9::text[])`
const FILE_COLUMNS = [
  'key',
  'category',
  'originalName',
  'ext',
  'size',
  'mime',
  'sha256',
  'createdAt',
  'owner',
] as const

// The counts the `file_counts` trigger would have added for these rows, in one statement.
const ADD_COUNTS = `
  insert into file_counts (scope, category, ext, n, changes)
  select scope, category, ext, n, n from unnest($1::text[], $2::text[], $3::text[], $4::bigint[])
    as added (scope, category, ext, n)
  on conflict (scope, category, ext)
  do update set n = file_counts.n + excluded.n, changes = file_counts.changes + excluded.n`

/**
 * The same rows into PostgreSQL, in one transaction: `insert … select from unnest(…)` of
 * FILE_BATCH rows a statement, with the `file_counts` trigger off, then what it would have
 * added to `file_counts` (per scope, category and extension: `n` and `changes` grow by the
 * rows inserted). With the trigger on, each row updates the same two count rows, and their
 * versions pile up within the transaction: 10,000 rows were not in after a minute. Then
 * `vacuum analyze`, as autovacuum would in time, so the planner knows the population.
 */
async function addPostgresImages(url: string, owner: string, from: number, to: number) {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query('begin')
    await client.query('alter table files disable trigger files_counts')
    const counts = new Map<string, number>()
    for (let start = from; start < to; start += FILE_BATCH) {
      const rows = Array.from({ length: Math.min(FILE_BATCH, to - start) }, (_, k) =>
        imageRow(start + k, owner),
      )
      await client.query(
        UNNEST_INSERT,
        FILE_COLUMNS.map((column) => rows.map((row) => row[column])),
      )
      for (const row of rows) countRow(counts, row)
    }
    const keys = [...counts.keys()].map((k) => k.split('\0'))
    const column = (i: number) => keys.map((k) => k[i])
    await client.query(ADD_COUNTS, [column(0), column(1), column(2), [...counts.values()]])
    await client.query('alter table files enable trigger files_counts')
    await client.query('commit')
  } catch (e) {
    await client.query('rollback').catch(() => {})
    throw e
  } finally {
    await client.end()
  }
  await vacuumAnalyze(url)
}

/** As the trigger counts a row: under every file (`*`) and under its owner (`u:…`, or `-`). */
function countRow(counts: Map<string, number>, row: Insertable<FilesTable>) {
  for (const scope of ['*', row.owner == null ? '-' : `u:${row.owner}`]) {
    const key = [scope, row.category, row.ext ?? ''].join('\0')
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
}

async function vacuumAnalyze(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query('vacuum analyze').finally(() => client.end())
}

function imageRow(i: number, owner: string): Insertable<FilesTable> {
  return {
    key: `image/20240101/${String(i).padStart(8, '0')}.png` as StorageKey,
    category: 'image',
    originalName: `photo-${i}.png`,
    ext: '.png',
    size: 102_400,
    mime: 'image/png',
    sha256: i.toString(16).padStart(64, '0'),
    createdAt: EPOCH + i * 1000,
    owner,
  }
}

export interface MaterialTree {
  /** A top-level category with children; a search by it covers its whole subtree. */
  parentId: number
}

const CHILDREN = 8
const PARENTS = 4

/**
 * `count` materials in PARENTS top-level categories of CHILDREN children each, through the
 * materials repository. One name in ten holds `标题`, the keyword the designer's users type.
 */
export async function addMaterials(target: IndexTarget, count: number): Promise<MaterialTree> {
  let parentId = 0
  const store = await openMetadataStore(indexConfig(target))
  try {
    await store.migrate()
    const leaves: number[] = []
    for (let p = 0; p < PARENTS; p++) {
      const parent = await store.materials.saveCategory({
        name: `分类 ${p}`,
        parentId: null,
        order: p,
      })
      if (p === 0) parentId = parent.id
      for (let c = 0; c < CHILDREN; c++) {
        const child = await store.materials.saveCategory({
          name: `子类 ${p}-${c}`,
          parentId: parent.id,
          order: c,
        })
        leaves.push(child.id)
      }
    }
    for (let start = 0; start < count; start += MATERIAL_BATCH) {
      const end = Math.min(count, start + MATERIAL_BATCH)
      await store.materials.transaction((repo) => saveMaterials(repo, leaves, start, end))
    }
  } finally {
    await store.close()
  }
  if (target.driver === 'postgres') await vacuumAnalyze(target.url)
  return { parentId }
}

async function saveMaterials(
  repo: MaterialRepository,
  leaves: number[],
  start: number,
  end: number,
) {
  for (let i = start; i < end; i++) {
    const name = i % 10 === 0 ? `活动标题样式 ${i}` : `正文样式 ${i}`
    await repo.saveMaterial({
      name,
      content: `<section style="color:#333"><p>${name}</p></section>`,
      categoryId: leaves[i % leaves.length] ?? null,
      thumbnail: null,
      tags: i % 3 === 0 ? ['title', '活动'] : ['body'],
      custom: {},
      createdAt: EPOCH + i * 1000,
    })
  }
}
