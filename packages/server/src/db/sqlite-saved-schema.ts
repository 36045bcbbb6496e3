import { type Kysely, sql } from '#kysely'

// biome-ignore lint/suspicious/noExplicitAny: the schema as the migrations leave it, not DbSchema
type AnyDb = Kysely<any>

/** The statements that make a SQLite index's schema, and the migrations whose end it is. */
export interface SavedSqliteSchema {
  migrations: string[]
  statements: string[]
}

/*
 * A new SQLite index is given the schema the migrations end at from statements saved with the
 * code (sqlite-schema.generated.ts), in one transaction: Kysely's migrator replays twelve
 * migrations through 59 statements, each its own transaction, in 30-50 ms of a first start;
 * the saved statements take 5-8 ms. They are the migrations' own output, saved by
 * `npm run save-sqlite-schema` and checked against a replay by the tests. An index with anything
 * in it, every PostgreSQL index, and a release whose migrations are not the saved ones go
 * through the migrator as before.
 */

/**
 * Creates the saved schema in an empty SQLite database and records every migration as run;
 * false (nothing done) when the database is not empty or the saved schema is not that of
 * `migrations`.
 */
export async function createFromSavedSchema(
  db: AnyDb,
  migrations: readonly string[],
): Promise<boolean> {
  // An index in use, the usual case, is told apart by a read, without the write lock.
  if (!(await isEmpty(db))) return false
  // Loaded only for a new index.
  const { SQLITE_SCHEMA } = await import('./sqlite-schema.generated.js')
  const saved = SQLITE_SCHEMA.migrations
  if (saved.length !== migrations.length || saved.some((name, i) => name !== migrations[i]))
    return false
  return db.connection().execute(async (c) => {
    // Immediate: a second process opening the same new file waits, then finds it not empty.
    await sql`begin immediate`.execute(c)
    try {
      if (!(await isEmpty(c))) {
        await sql`rollback`.execute(c)
        return false
      }
      for (const statement of SQLITE_SCHEMA.statements) await sql.raw(statement).execute(c)
      const now = new Date().toISOString()
      for (const name of migrations)
        await sql`insert into kysely_migration (name, timestamp) values (${name}, ${now})`.execute(
          c,
        )
      await sql`insert into kysely_migration_lock (id, is_locked) values ('migration_lock', 0)`.execute(
        c,
      )
      await sql`commit`.execute(c)
      return true
    } catch (e) {
      await sql`rollback`.execute(c).catch(() => {})
      throw e
    }
  })
}

async function isEmpty(db: AnyDb): Promise<boolean> {
  const { rows } = await sql<{ n: number }>`select count(*) as n from sqlite_schema`.execute(db)
  return Number(rows[0]?.n) === 0
}

/**
 * The statements that make this database's schema, in the order SQLite keeps them: tables,
 * indexes, triggers and virtual tables, without SQLite's own tables nor those a virtual table
 * makes for itself (FTS5's shadow tables).
 */
export async function schemaStatements(db: AnyDb): Promise<string[]> {
  const shadow = new Set(
    (await sql<{ name: string; type: string }>`pragma table_list`.execute(db)).rows
      .filter((t) => t.type === 'shadow')
      .map((t) => t.name),
  )
  const { rows } = await sql<{ name: string; sql: string }>`
    select name, sql from sqlite_schema
    where sql is not null and name not like 'sqlite_%'
    order by rowid`.execute(db)
  return rows.filter((r) => !shadow.has(r.name)).map((r) => r.sql)
}
