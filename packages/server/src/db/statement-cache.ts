import type { SqliteDatabase, SqliteStatement } from '#kysely'

/** Distinct SQL texts kept prepared; the least recently used one beyond this is dropped. */
const MAX_STATEMENTS = 256

/**
 * Kysely's SQLite driver prepares every query anew, and preparing (parsing and planning the
 * SQL) costs more than running a small insert. The same SQL text reuses its prepared
 * statement. Safe because the driver runs one query at a time on its one connection, a streamed
 * one included, and SQLite re-prepares a statement by itself after a schema change.
 */
export function withStatementCache(db: SqliteDatabase): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>()
  return {
    close: () => {
      statements.clear()
      return db.close()
    },
    prepare(sql: string): SqliteStatement {
      let statement = statements.get(sql)
      if (statement) statements.delete(sql)
      else statement = db.prepare(sql)
      statements.set(sql, statement)
      if (statements.size > MAX_STATEMENTS)
        statements.delete(statements.keys().next().value as string)
      return statement
    },
  }
}
