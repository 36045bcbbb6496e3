import type { SqliteDatabase, SqliteStatement } from '#kysely'

/** Node's own SQLite, unflagged from 22.13 and 23.4; no compiler needed to install it. */
export function builtinSqliteAvailable(version = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number)
  return major > 23 || (major === 23 && minor >= 4) || (major === 22 && minor >= 13)
}

interface NodeStatement {
  columns(): unknown[]
  all(...params: unknown[]): unknown[]
  run(...params: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint }
  iterate(...params: unknown[]): IterableIterator<unknown>
}

interface NodeDatabase {
  exec(sql: string): void
  prepare(sql: string): NodeStatement
  close(): void
}

export type BuiltinSqlite = SqliteDatabase & { exec(sql: string): void }

type NodeSqliteModule = { DatabaseSync: new (path: string) => NodeDatabase }

let loaded: Promise<NodeSqliteModule> | undefined

/**
 * Imports `node:sqlite` without its one-time ExperimentalWarning (printed at every start on
 * Node 22 and on earlier Node 24 releases, although the module is what we rely on); every other
 * warning passes through.
 */
function loadNodeSqlite(): Promise<NodeSqliteModule> {
  loaded ??= (async () => {
    const emit = process.emitWarning
    process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
      const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string })?.type
      if (type === 'ExperimentalWarning' && String(warning).includes('SQLite')) return
      return (emit as (...a: unknown[]) => void).call(process, warning, ...rest)
    } as typeof process.emitWarning
    try {
      return (await import('node:sqlite' as string)) as NodeSqliteModule
    } finally {
      process.emitWarning = emit
    }
  })()
  return loaded
}

/**
 * Opens a file with `node:sqlite` and presents it as the database Kysely's SqliteDialect
 * drives (the better-sqlite3 shape): parameters as one array, and `reader` telling queries
 * that return rows (SELECT, RETURNING, PRAGMA) from the rest.
 */
export async function openBuiltinSqlite(file: string): Promise<BuiltinSqlite> {
  const { DatabaseSync } = await loadNodeSqlite()
  const db = new DatabaseSync(file)
  return {
    exec: (sql) => db.exec(sql),
    close: () => db.close(),
    prepare(sql): SqliteStatement {
      const stmt = db.prepare(sql)
      return {
        reader: stmt.columns().length > 0,
        all: (params) => sqliteCall(() => stmt.all(...params)),
        run: (params) => sqliteCall(() => stmt.run(...params)),
        iterate: (params) => sqliteCall(() => stmt.iterate(...params)),
      }
    },
  }
}

/**
 * node:sqlite reports every SQLite failure as `code: 'ERR_SQLITE_ERROR'` with the numeric
 * extended result code in `errcode`; better-sqlite3 (and `db/errors.ts`) use SQLite's names.
 * The constraint, busy and full codes the store reacts to get their names here.
 */
const RESULT_NAMES: Readonly<Record<number, string>> = {
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  13: 'SQLITE_FULL',
  19: 'SQLITE_CONSTRAINT',
  275: 'SQLITE_CONSTRAINT_CHECK',
  787: 'SQLITE_CONSTRAINT_FOREIGNKEY',
  1299: 'SQLITE_CONSTRAINT_NOTNULL',
  1555: 'SQLITE_CONSTRAINT_PRIMARYKEY',
  2067: 'SQLITE_CONSTRAINT_UNIQUE',
}

function sqliteCall<T>(run: () => T): T {
  try {
    return run()
  } catch (e) {
    const name = RESULT_NAMES[(e as { errcode?: number }).errcode ?? -1]
    if (name && e instanceof Error) Object.defineProperty(e, 'code', { value: name })
    throw e
  }
}
