import assert from 'node:assert/strict'
import { join } from 'node:path'
import { migrateToLatest } from '../../src/db/migrations.js'
import { openMetadataStore, openSqlite } from '../../src/db/open.js'
import { SQLITE_SCHEMA } from '../../src/db/sqlite-schema.generated.js'
import { replayedSqliteSchema } from '../../src/db/sqlite-schema-source.js'
import { skipOrFail } from '../helpers/postgres.js'
import { ENGINES, engineMissing, engineNotApplicable, rawSqlite } from '../helpers/sqlite.js'
import { tempDir } from '../helpers/temp-dir.js'
import { test } from '../helpers/test.js'

/** Everything SQLite keeps of a schema, shadow tables included, and the migrator's rows. */
async function wholeSchema(file: string, engine: (typeof ENGINES)[number]) {
  const raw = await rawSqlite(file, engine)
  try {
    const rows = (sql: string) =>
      (raw.prepare(sql).all([]) as Record<string, unknown>[]).map((r) => ({ ...r }))
    return {
      schema: rows('select type, name, tbl_name, sql from sqlite_schema order by type, name'),
      migrations: rows('select name from kysely_migration order by name'),
      lock: rows('select id, is_locked from kysely_migration_lock'),
    }
  } finally {
    raw.close()
  }
}

test('the saved SQLite schema is the one the migrations make (after adding a migration, npm run save-sqlite-schema saves it again)', async () => {
  assert.deepEqual(
    SQLITE_SCHEMA,
    await replayedSqliteSchema(),
    'the saved schema is not what the migrations make: run npm run save-sqlite-schema',
  )
})

for (const engine of ENGINES.filter((e) => engineNotApplicable(e) === null)) {
  test(`a new SQLite index through ${engine} is made from the saved schema and ends exactly as one the migrator made`, async (t) => {
    const missing = await engineMissing(engine)
    if (missing !== null) return skipOrFail(t, missing)
    const dir = await tempDir(t, 'ue-saved-schema-')
    const saved = join(dir, 'saved.db')
    const store = await openMetadataStore({ driver: 'sqlite', engine, file: saved })
    try {
      assert.deepEqual(await store.migrate(), SQLITE_SCHEMA.migrations)
      assert.deepEqual(await store.migrate(), [], 'a second run finds nothing to do')
    } finally {
      await store.close()
    }
    const replayed = join(dir, 'replayed.db')
    const { db } = await openSqlite({ driver: 'sqlite', engine, file: replayed })
    try {
      await migrateToLatest(db, { savedSchema: false })
    } finally {
      await db.destroy()
    }
    assert.deepEqual(await wholeSchema(saved, engine), await wholeSchema(replayed, engine))
  })

  test(`a SQLite index through ${engine} that already holds a table is brought up by the migrator, the table kept`, async (t) => {
    const missing = await engineMissing(engine)
    if (missing !== null) return skipOrFail(t, missing)
    const dir = await tempDir(t, 'ue-saved-schema-')
    const file = join(dir, 'index.db')
    const raw = await rawSqlite(file, engine)
    raw.exec('create table kept (x integer)')
    raw.exec('insert into kept values (7)')
    raw.close()
    const store = await openMetadataStore({ driver: 'sqlite', engine, file })
    try {
      assert.deepEqual(await store.migrate(), SQLITE_SCHEMA.migrations)
    } finally {
      await store.close()
    }
    const again = await rawSqlite(file, engine)
    try {
      assert.deepEqual({ ...(again.prepare('select x from kept').all([])[0] as object) }, { x: 7 })
    } finally {
      again.close()
    }
  })
}
