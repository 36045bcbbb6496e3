import { migrateToLatest } from './migrations.js'
import { openSqlite } from './open.js'
import { type SavedSqliteSchema, schemaStatements } from './sqlite-saved-schema.js'

/**
 * The schema the migrations make, replayed through Kysely's migrator on an in-memory database:
 * what `npm run save-sqlite-schema` saves, and what the tests hold the saved schema to.
 */
export async function replayedSqliteSchema(): Promise<SavedSqliteSchema> {
  const { db } = await openSqlite({ driver: 'sqlite', file: ':memory:' })
  try {
    const migrations = await migrateToLatest(db, { savedSchema: false })
    return { migrations, statements: await schemaStatements(db) }
  } finally {
    await db.destroy()
  }
}
