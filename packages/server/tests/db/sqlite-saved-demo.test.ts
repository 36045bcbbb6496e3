import assert from 'node:assert/strict'
import { join } from 'node:path'
import type { MaterialRepository } from '../../src/db/material-repo.js'
import { openMetadataStore } from '../../src/db/open.js'
import { SQLITE_DEMO } from '../../src/db/sqlite-demo.generated.js'
import type { MetadataStore } from '../../src/db/types.js'
import { importedDemoRows } from '../../src/materials/saved-demo-source.js'
import { DEMO_MATERIALS, seedDemoMaterials } from '../../src/materials/seed.js'
import { importMaterials } from '../../src/materials/transfer.js'
import { skipOrFail } from '../helpers/postgres.js'
import { ENGINES, engineMissing, engineNotApplicable, rawSqlite } from '../helpers/sqlite.js'
import { tempDir } from '../helpers/temp-dir.js'
import { test } from '../helpers/test.js'

test('the saved demo rows are what importing the demo materials writes (after changing them, npm run save-sqlite-schema saves them again)', async () => {
  assert.deepEqual(
    SQLITE_DEMO,
    await importedDemoRows(),
    'the saved demo rows are not what importing the demo materials writes: run npm run save-sqlite-schema',
  )
})

/** What a reader sees of a library: its categories, and pages of a few searches. */
async function library(repo: MaterialRepository) {
  const searches = ['', 'title', '标题', 'quote', 'a', '分', 'Thanks for reading']
  return {
    categories: (await repo.categories()).map(({ createdAt: _c, updatedAt: _u, ...c }) => c),
    searches: await Promise.all(
      searches.map(async (keyword) => {
        const page = await repo.search({ page: 1, pageSize: 50, keyword })
        return { keyword, total: page.total, ids: page.items.map((m) => m.id) }
      }),
    ),
  }
}

for (const engine of ENGINES.filter((e) => engineNotApplicable(e) === null)) {
  test(`a first start through ${engine} writes the demo materials from the saved rows, and the library then reads and searches as one they were imported into`, async (t) => {
    const missing = await engineMissing(engine)
    if (missing !== null) return skipOrFail(t, missing)
    const dir = await tempDir(t, 'ue-saved-demo-')
    const open = async (name: string): Promise<[MetadataStore, string]> => {
      const file = join(dir, name)
      const store = await openMetadataStore({ driver: 'sqlite', engine, file })
      await store.migrate()
      return [store, file]
    }
    const [restored, restoredFile] = await open('restored.db')
    const [imported, importedFile] = await open('imported.db')
    try {
      const before = Date.now()
      assert.deepEqual(await seedDemoMaterials(restored.materials), {
        categories: { created: DEMO_MATERIALS.categories.length, updated: 0, unchanged: 0 },
        materials: { created: DEMO_MATERIALS.materials.length, updated: 0, unchanged: 0 },
      })
      await importMaterials(imported.materials, DEMO_MATERIALS, { alreadyClean: true })
      assert.deepEqual(await library(restored.materials), await library(imported.materials))
      const times = (await restored.materials.allMaterials()).map((m) => m.createdAt)
      assert.ok(
        times.every((time) => time >= before && time <= Date.now()),
        'the restored rows carry the time they were written',
      )
    } finally {
      await restored.close()
      await imported.close()
    }
    // Every row the demo wrote, write times aside, the same in both files.
    const rows = async (file: string) => {
      const raw = await rawSqlite(file, engine)
      try {
        return SQLITE_DEMO.tables.map(({ table, columns }) => {
          const keep = columns.filter((c) => c !== 'created_at' && c !== 'updated_at')
          return (
            raw
              .prepare(`select ${keep.join(', ')} from ${table} order by ${keep.join(', ')}`)
              .all([]) as object[]
          ).map((r) => ({ ...r }))
        })
      } finally {
        raw.close()
      }
    }
    assert.deepEqual(await rows(restoredFile), await rows(importedFile))
  })
}

test('where a category is already stored, the demo materials are imported, not written from the saved rows', async (t) => {
  const dir = await tempDir(t, 'ue-saved-demo-')
  const store = await openMetadataStore({ driver: 'sqlite', file: join(dir, 'index.db') })
  try {
    await store.migrate()
    await store.materials.saveCategory({ id: 2, name: 'mine', parentId: null, order: 9 })
    assert.equal(await store.materials.restoreDemo(SQLITE_DEMO.digest), null)
    assert.equal(await store.materials.restoreDemo('another digest'), null)
    const summary = await seedDemoMaterials(store.materials)
    assert.deepEqual(summary.categories, {
      created: DEMO_MATERIALS.categories.length - 1,
      updated: 1,
      unchanged: 0,
    })
    assert.equal((await store.materials.allMaterials()).length, DEMO_MATERIALS.materials.length)
  } finally {
    await store.close()
  }
})
