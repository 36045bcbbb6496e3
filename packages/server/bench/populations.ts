import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import pg from 'pg'
import type { Insertable } from '#kysely'
import { type IndexConfig, openMetadataStore } from '../src/db/open.js'
import type { FilesTable } from '../src/db/schema.js'
import { DAY_MS } from '../src/shared/durations.js'
import type { StorageKey } from '../src/shared/types.js'
import { openRawSqlite } from './raw-sqlite.js'

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
const MATERIAL_BATCH = 2_000
// Fixed creation times (one second apart) so every run pages through the same order.
const EPOCH = Date.UTC(2024, 0, 1)

/**
 * Grows the image index at `target` from `from` to `to` rows owned by `owner`: the index
 * layer's migrations make the schema, then bulk inserts in large transactions (the index's
 * own `add`, a statement and a commit per row, would take most of an hour at 1M).
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

// Rows a SQLite transaction inserts: the fill of 10M files commits ten times.
const SQLITE_BATCH = 1_000_000

/**
 * The rows `imageRow` describes, generated inside SQLite (one statement per batch, a recursive
 * counter, no row crossing from JavaScript), with the `file_counts` insert trigger dropped for
 * the batch and created again from its own text before the commit, so the schema is the
 * migrations' own; the counts it would have added are added once, as on PostgreSQL.
 */
async function addSqliteImages(file: string, owner: string, from: number, to: number) {
  const db = await openRawSqlite(file)
  try {
    db.exec('pragma synchronous = off')
    const triggers = COUNTS_TRIGGERS.map((name) => {
      const [found] = db.all("select sql from sqlite_master where type = 'trigger' and name = ?", [
        name,
      ])
      const text = found?.sql as string | undefined
      if (text === undefined) throw new Error(`no ${name} trigger in ${file}`)
      return { name, text }
    })
    for (let start = from; start < to; start += SQLITE_BATCH) {
      const end = Math.min(to, start + SQLITE_BATCH)
      db.exec('begin')
      try {
        for (const { name } of triggers) db.exec(`drop trigger ${name}`)
        // BigInt: a number may be bound as a REAL, and 1234.0 would be in the names.
        db.run(SQLITE_INSERT, [BigInt(start), BigInt(end), BigInt(EPOCH), owner])
        const n = end - start
        db.run(SQLITE_ADD_COUNTS, [n, n, `u:${owner}`, n, n])
        for (const [day, inDay] of daysOf(start, end))
          for (const scope of ['*', `u:${owner}`])
            db.run(SQLITE_ADD_DAY_COUNTS, [scope, day, inDay])
        for (const { text } of triggers) db.exec(text)
        db.exec('commit')
      } catch (e) {
        db.exec('rollback')
        throw e
      }
    }
  } finally {
    db.close()
  }
}

const COUNTS_TRIGGERS = ['files_counts_insert', 'files_day_counts_insert']

/** How many of rows `start` to `end` (excluded) fall on each day of `created_at`. */
function daysOf(start: number, end: number): Map<number, number> {
  const days = new Map<number, number>()
  for (let i = start; i < end; ) {
    const day = Math.floor((EPOCH + i * 1000) / DAY_MS)
    // The first row of the next day.
    const next = Math.min(end, Math.ceil(((day + 1) * DAY_MS - EPOCH) / 1000))
    days.set(day, next - i)
    i = next
  }
  return days
}

// Row i exactly as imageRow(i, owner) builds it.
const SQLITE_INSERT = `
  with recursive n(i) as (select ? union all select i + 1 from n where i + 1 < ?)
  insert into files (key, category, original_name, ext, size, mime, sha256, created_at, owner)
  select 'image/20240101/' || printf('%08d', i) || '.png', 'image', 'photo-' || i || '.png',
         '.png', 102400, 'image/png', printf('%064x', i), ? + i * 1000, ?
  from n`

const SQLITE_ADD_COUNTS = `
  insert into file_counts (scope, category, ext, n, changes)
  values ('*', 'image', '.png', ?, ?), (?, 'image', '.png', ?, ?)
  on conflict (scope, category, ext)
  do update set n = file_counts.n + excluded.n, changes = file_counts.changes + excluded.n`

const SQLITE_ADD_DAY_COUNTS = `
  insert into file_day_counts (scope, category, ext, day, n) values (?, 'image', '.png', ?, ?)
  on conflict (scope, category, ext, day) do update set n = file_day_counts.n + excluded.n`

/**
 * A SQLite index of `count` images owned by `owner`, built once under `cacheDir` and reused by
 * later runs (10M files take minutes to insert and about 5 GB). The file's name holds the
 * count, the owner and a digest of the migrations and of the fill, so a schema change builds
 * a new one. The measured server opens it in place; a listing only reads.
 */
export async function cachedSqliteImages(
  cacheDir: string,
  owner: string,
  count: number,
): Promise<{ file: string; built: boolean }> {
  const probe = await openMetadataStore({ driver: 'sqlite', file: ':memory:' })
  const migrations = await probe.migrate().finally(() => probe.close())
  const digest = createHash('sha256')
    .update(
      JSON.stringify([migrations, SQLITE_INSERT, SQLITE_ADD_COUNTS, SQLITE_ADD_DAY_COUNTS, EPOCH]),
    )
    .digest('hex')
    .slice(0, 12)
  const file = join(cacheDir, `images-${count}-${owner}-${digest}.db`)
  if (existsSync(file)) return { file, built: false }
  await mkdir(cacheDir, { recursive: true })
  // Built under another name, so a run stopped halfway leaves nothing that looks finished.
  const partial = `${file}.${process.pid}.partial`
  await rm(partial, { force: true })
  try {
    await addImages({ driver: 'sqlite', file: partial }, owner, 0, count)
    await rename(partial, file)
  } finally {
    for (const suffix of ['', '-wal', '-shm']) await rm(`${partial}${suffix}`, { force: true })
  }
  return { file, built: true }
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

// And what the `file_day_counts` trigger would have added.
const ADD_DAY_COUNTS = `
  insert into file_day_counts (scope, category, ext, day, n)
  select * from unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[])
  on conflict (scope, category, ext, day) do update set n = file_day_counts.n + excluded.n`

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
    await client.query('alter table files disable trigger files_day_counts')
    const counts = new Map<string, number>()
    const dayCounts = new Map<string, number>()
    for (let start = from; start < to; start += FILE_BATCH) {
      const rows = Array.from({ length: Math.min(FILE_BATCH, to - start) }, (_, k) =>
        imageRow(start + k, owner),
      )
      await client.query(
        UNNEST_INSERT,
        FILE_COLUMNS.map((column) => rows.map((row) => row[column])),
      )
      for (const row of rows) countRow(counts, dayCounts, row)
    }
    const keys = [...counts.keys()].map((k) => k.split('\0'))
    const column = (i: number) => keys.map((k) => k[i])
    await client.query(ADD_COUNTS, [column(0), column(1), column(2), [...counts.values()]])
    const dayKeys = [...dayCounts.keys()].map((k) => k.split('\0'))
    const dayColumn = (i: number) => dayKeys.map((k) => k[i])
    await client.query(ADD_DAY_COUNTS, [
      dayColumn(0),
      dayColumn(1),
      dayColumn(2),
      dayColumn(3),
      [...dayCounts.values()],
    ])
    await client.query('alter table files enable trigger files_day_counts')
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

/**
 * As the triggers count a row: under every file (`*`) and under its owner (`u:…`, or `-`), and
 * the same per day of `created_at`.
 */
function countRow(
  counts: Map<string, number>,
  dayCounts: Map<string, number>,
  row: Insertable<FilesTable>,
) {
  const day = Math.floor(Number(row.createdAt) / DAY_MS)
  for (const scope of ['*', row.owner == null ? '-' : `u:${row.owner}`]) {
    const key = [scope, row.category, row.ext ?? ''].join('\0')
    counts.set(key, (counts.get(key) ?? 0) + 1)
    const dayKey = `${key}\0${day}`
    dayCounts.set(dayKey, (dayCounts.get(dayKey) ?? 0) + 1)
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
 * `count` materials in PARENTS top-level categories of CHILDREN children each. One name in ten
 * holds `标题`, the keyword the designer's users type. Everything is saved through the materials
 * repository, the materials with `saveMaterials` (a batch of rows per statement, as an import
 * saves them: saved one by one on PostgreSQL, 100,000 took 14 of a full run's 25 minutes).
 */
export async function addMaterials(target: IndexTarget, count: number): Promise<MaterialTree> {
  let parentId = 0
  const leaves: number[] = []
  const store = await openMetadataStore(indexConfig(target))
  try {
    await store.migrate()
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
      const batch = []
      for (let i = start; i < Math.min(count, start + MATERIAL_BATCH); i++)
        batch.push(benchMaterial(i, leaves))
      await store.materials.saveMaterials(batch)
    }
  } finally {
    await store.close()
  }
  if (target.driver === 'postgres') await vacuumAnalyze(target.url)
  return { parentId }
}

/** The bench's material `i`, filed under one of `leaves` in turn. */
function benchMaterial(i: number, leaves: readonly number[]) {
  const name = i % 10 === 0 ? `活动标题样式 ${i}` : `正文样式 ${i}`
  return {
    name,
    content: `<section style="color:#333"><p>${name}</p></section>`,
    categoryId: leaves[i % leaves.length] ?? null,
    thumbnail: null,
    tags: i % 3 === 0 ? ['title', '活动'] : ['body'],
    custom: {},
    createdAt: EPOCH + i * 1000,
  }
}
