import { resolveSqliteEngine } from '../src/db/open.js'
import { openBuiltinSqlite } from '../src/db/sqlite-builtin.js'

/** Statements on an SQLite file outside Kysely, with positional `?` parameters. */
export interface RawSqlite {
  exec(sql: string): void
  all(sql: string, params?: readonly unknown[]): Record<string, unknown>[]
  run(sql: string, params?: readonly unknown[]): void
  close(): void
}

/**
 * Opens `file` with the engine the server itself would pick on this Node line: node:sqlite
 * where it exists, else better-sqlite3 (which aborts the process at exit from Node 24 on, so it
 * must not be loaded there). Rows come back as plain objects whatever the engine.
 */
export async function openRawSqlite(file: string): Promise<RawSqlite> {
  if (resolveSqliteEngine() === 'node:sqlite') {
    const db = await openBuiltinSqlite(file)
    return {
      exec: (sql) => db.exec(sql),
      all: (sql, params = []) =>
        (db.prepare(sql).all(params) as Record<string, unknown>[]).map((row) => ({ ...row })),
      run: (sql, params = []) => void db.prepare(sql).run(params),
      close: () => db.close(),
    }
  }
  const { default: Database } = await import('better-sqlite3')
  const db = new Database(file)
  return {
    exec: (sql) => void db.exec(sql),
    all: (sql, params = []) => db.prepare(sql).all(...params) as Record<string, unknown>[],
    run: (sql, params = []) => void db.prepare(sql).run(...params),
    close: () => db.close(),
  }
}
