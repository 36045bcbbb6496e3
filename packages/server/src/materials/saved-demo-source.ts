import { createMaterialRepository } from '../db/material-repo.js'
import { migrateToLatest } from '../db/migrations.js'
import { openSqlite } from '../db/open.js'
import { rowsOfEveryTable, type SavedRows, withoutWriteTimes } from '../db/sqlite-saved-rows.js'
import { DEMO_MATERIALS, demoDigest } from './seed.js'
import { importMaterials } from './transfer.js'

/**
 * The rows importing the demo materials writes into a new SQLite index, their write times 0: what
 * `npm run save-sqlite-schema` saves for a first start, and what the tests hold the saved rows to.
 */
export async function importedDemoRows(): Promise<SavedRows> {
  const { db } = await openSqlite({ driver: 'sqlite', file: ':memory:' })
  try {
    await migrateToLatest(db)
    await importMaterials(createMaterialRepository(db), DEMO_MATERIALS, { alreadyClean: true })
    return { digest: demoDigest(), tables: withoutWriteTimes(await rowsOfEveryTable(db)) }
  } finally {
    await db.destroy()
  }
}
