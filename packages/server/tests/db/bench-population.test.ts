import assert from 'node:assert/strict'
import { statSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { addMaterials, cachedSqliteImages } from '../../bench/populations.js'
import { openRawSqlite } from '../../bench/raw-sqlite.js'
import { openMetadataStore } from '../../src/db/open.js'
import { skipOrFail, startPostgresLane } from '../helpers/postgres.js'
import { after, describe, test } from '../helpers/test.js'

// The bench's `--big` population: the SQLite index of many images, filled inside SQLite and kept
// in a cache folder. At a smoke size here; the bench builds 10M the same way.
const dir = await mkdtemp(join(tmpdir(), 'ueditor-bench-population-'))
after(() => rm(dir, { recursive: true, force: true }))

async function schemaOf(file: string): Promise<unknown[]> {
  const db = await openRawSqlite(file)
  try {
    return db.all('select type, name, tbl_name, sql from sqlite_master order by name')
  } finally {
    db.close()
  }
}

describe('the bench population of images in a cached SQLite index', () => {
  test('is built once with the rows, counts and schema the migrations give, then reused as it is', async () => {
    const cacheDir = join(dir, 'cache')
    const first = await cachedSqliteImages(cacheDir, 'bench', 2_500)
    assert.equal(first.built, true)

    const fresh = join(dir, 'fresh.db')
    const store = await openMetadataStore({ driver: 'sqlite', file: fresh })
    await store.migrate()
    await store.close()
    assert.deepEqual(await schemaOf(first.file), await schemaOf(fresh))

    const db = await openRawSqlite(first.file)
    try {
      assert.deepEqual(db.all('select count(*) as n from files'), [{ n: 2_500 }])
      assert.deepEqual(db.all('select * from files where id = 1235')[0], {
        id: 1235,
        key: 'image/20240101/00001234.png',
        category: 'image',
        original_name: 'photo-1234.png',
        ext: '.png',
        size: 102_400,
        mime: 'image/png',
        sha256: (1234).toString(16).padStart(64, '0'),
        created_at: Date.UTC(2024, 0, 1) + 1_234_000,
        owner: 'bench',
      })
      assert.deepEqual(
        db.all('select scope, category, ext, n, changes from file_counts order by scope'),
        [
          { scope: '*', category: 'image', ext: '.png', n: 2_500, changes: 2_500 },
          { scope: 'u:bench', category: 'image', ext: '.png', n: 2_500, changes: 2_500 },
        ],
      )
      // 2,500 seconds from midnight: one day, as the per-day count trigger would have counted.
      const day = Date.UTC(2024, 0, 1) / 86_400_000
      assert.deepEqual(
        db.all('select scope, category, ext, day, n from file_day_counts order by scope'),
        [
          { scope: '*', category: 'image', ext: '.png', day, n: 2_500 },
          { scope: 'u:bench', category: 'image', ext: '.png', day, n: 2_500 },
        ],
      )
    } finally {
      db.close()
    }

    const modified = statSync(first.file).mtimeMs
    const again = await cachedSqliteImages(cacheDir, 'bench', 2_500)
    assert.deepEqual(again, { file: first.file, built: false })
    assert.equal(statSync(again.file).mtimeMs, modified)
  })

  test('keeps the count trigger, so a file added later is listed and counted', async () => {
    const { file } = await cachedSqliteImages(join(dir, 'cache-2'), 'bench', 1_000)
    const store = await openMetadataStore({ driver: 'sqlite', file })
    try {
      await store.files.add({
        key: '2025/01/02/late.png' as never,
        category: 'image',
        originalName: 'late.png',
        ext: '.png',
        size: 1,
        mime: 'image/png',
        sha256: '',
      })
      const page = await store.files.list({
        categories: ['image'],
        exts: ['.png'],
        start: 0,
        size: 1,
      })
      assert.equal(page.total, 1_001)
    } finally {
      await store.close()
    }
  })
})

// The bench's materials are saved a batch per statement through the repository on either
// engine; the search groups compare the engines, so both must hold the same tables.
describe('the bench population of materials', () => {
  test('on PostgreSQL holds the rows, terms and counts it holds on SQLite', async (t) => {
    const lane = await startPostgresLane()
    if ('unavailable' in lane) return skipOrFail(t, lane.unavailable)
    t.after(() => lane.cluster.stop())
    const url = await lane.cluster.createDatabase()
    const file = join(dir, 'materials.db')
    const count = 75
    const onPostgres = await addMaterials({ driver: 'postgres', url }, count)
    const saved = await addMaterials({ driver: 'sqlite', file }, count)
    assert.deepEqual(onPostgres, saved)

    const tables = {
      materials:
        'select id, name, content, category_id, thumbnail, tags, tags_search, custom, created_at from materials',
      terms: 'select term, id, category_key, created_at from material_terms',
      counts: 'select term, category_key, n from material_term_counts where n > 0',
    }
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    const sqlite = await openRawSqlite(file)
    try {
      for (const [table, text] of Object.entries(tables)) {
        const written = normalised((await client.query(text)).rows)
        const expected = normalised(sqlite.all(text) as Record<string, unknown>[])
        assert.ok(expected.length > count - 1, table)
        assert.deepEqual(written, expected, table)
      }
    } finally {
      sqlite.close()
      await client.end()
    }
  })
})

/** Rows with numbers as numbers (pg gives bigints as text), in one order whatever the collation. */
function normalised(rows: readonly Record<string, unknown>[]): string[] {
  return rows
    .map((row) =>
      JSON.stringify(
        Object.entries(row).map(([k, v]) => [
          k,
          typeof v === 'string' && /^\d+$/.test(v) && k !== 'term' ? Number(v) : v,
        ]),
      ),
    )
    .sort()
}
