import { mkdir, open, rename, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, resolve } from 'node:path'
import { CamelCasePlugin, Kysely, sql } from '#kysely'
import { UeError } from '../shared/errors.js'
import { createAiUsageStore } from './ai-usage.js'
import { createDocumentRepository } from './document-repo.js'
import { guarded } from './errors.js'
import { createFileIndex } from './file-index.js'
import { createMaterialRepository } from './material-repo.js'
import { migrateToLatest, unknownMigrations } from './migrations.js'
import { createOutbox } from './outbox.js'
import type { DbSchema } from './schema.js'
import { type BuiltinSqlite, builtinSqliteAvailable, openBuiltinSqlite } from './sqlite-builtin.js'
import { SnapshotSqliteDialect, type SyncSnapshots } from './sqlite-snapshots.js'
import { withStatementCache } from './statement-cache.js'
import type { MetadataStore } from './types.js'
import { createUploadLedger } from './upload-ledger.js'

/** Which library opens the SQLite file; 'auto' prefers Node's own `node:sqlite`. */
export type SqliteEngine = 'auto' | 'node:sqlite' | 'better-sqlite3'

export interface SqliteIndexConfig {
  driver: 'sqlite'
  /** A file path, or ':memory:'. */
  file: string
  engine?: SqliteEngine
}

/** The engine 'auto' stands for on this Node: node:sqlite where it exists (22.13+), else better-sqlite3. */
export function resolveSqliteEngine(engine: SqliteEngine = 'auto'): Exclude<SqliteEngine, 'auto'> {
  if (engine !== 'auto') return engine
  return builtinSqliteAvailable() ? 'node:sqlite' : 'better-sqlite3'
}

export interface PostgresIndexConfig {
  driver: 'postgres'
  /** postgres:// or postgresql://; may hold a password, so it never appears in a message. */
  url: string
  /** Connections this process keeps at most. */
  poolSize: number
  /** Longest wait for a connection (a new one, or a free one of the pool). */
  connectTimeoutMs?: number
  /** Longest wait for a query's answer; the query then fails with UE_INDEX_FAILED. */
  queryTimeoutMs?: number
  /**
   * Send the listing's and the search's statements by name, prepared once per connection
   * (default true). Off behind a pooler that does not keep them, such as PgBouncer before 1.21
   * in transaction mode.
   */
  preparedStatements?: boolean
}

/** One member per dialect; `driver` discriminates. */
export type IndexConfig = SqliteIndexConfig | PostgresIndexConfig

export async function openMetadataStore(cfg: IndexConfig): Promise<MetadataStore> {
  switch (cfg.driver) {
    case 'sqlite': {
      const { db, snapshots } = await openSqlite(cfg)
      return storeOver(db, 'sqlite', snapshots)
    }
    case 'postgres': {
      // PostgreSQL's driver and dialect load only for a PostgreSQL index.
      const { openPostgres } = await import('./open-postgres.js')
      const { db, pool } = await openPostgres(cfg)
      return storeOver(db, 'postgres', undefined, pool)
    }
  }
}

export async function openSqlite(
  cfg: SqliteIndexConfig,
): Promise<{ db: Kysely<DbSchema>; snapshots: SyncSnapshots }> {
  try {
    const engine = resolveSqliteEngine(cfg.engine)
    if (engine === 'node:sqlite' && !builtinSqliteAvailable())
      throw new Error(`node:sqlite needs Node 22.13 or later (this is ${process.version})`)
    if (cfg.file !== ':memory:') await mkdir(dirname(resolve(cfg.file)), { recursive: true })
    const sqlite =
      engine === 'node:sqlite' ? await openBuiltinSqlite(cfg.file) : await openBetter(cfg.file)
    try {
      for (const pragma of PRAGMAS) sqlite.exec(`PRAGMA ${pragma}`)
    } catch (e) {
      sqlite.close()
      throw e
    }
    const dialect = new SnapshotSqliteDialect(withStatementCache(sqlite))
    const db = new Kysely<DbSchema>({ dialect, plugins: [new CamelCasePlugin()] })
    // Kysely closes the database on destroy() only once it has used the connection, and reads
    // through snapshots never go through Kysely: take the connection once now.
    await db.connection().execute(async () => {})
    return { db, snapshots: dialect.snapshots }
  } catch (cause) {
    const reason = cause instanceof Error ? `: ${cause.message}` : ''
    throw new UeError('UE_INDEX_FAILED', { detail: `cannot open the SQLite index${reason}`, cause })
  }
}

const PRAGMAS = [
  'journal_mode = WAL',
  'busy_timeout = 5000',
  'foreign_keys = ON',
  'synchronous = NORMAL',
]

/**
 * better-sqlite3 is an optional dependency (a native build), needed only where Node has no
 * node:sqlite. It is a CommonJS package: required, not imported, it loads without Node's
 * import of CommonJS (which reads its exports with a lexer set up on first use, about 10 ms).
 */
async function openBetter(file: string): Promise<BuiltinSqlite> {
  let Database: typeof import('better-sqlite3')
  try {
    Database = createRequire(import.meta.url)('better-sqlite3') as typeof import('better-sqlite3')
  } catch (cause) {
    throw new Error(
      `better-sqlite3 is not installed or not built for Node ${process.versions.node}: run "npm install better-sqlite3", or use Node 22.13 or later (node:sqlite needs no build)`,
      { cause },
    )
  }
  return new Database(file)
}

function storeOver(
  db: Kysely<DbSchema>,
  dialect: MetadataStore['dialect'],
  snapshots?: SyncSnapshots,
  pool?: MetadataStore['limitsClient'],
): MetadataStore {
  let closing: Promise<void> | undefined
  return {
    dialect,
    limitsClient: pool ?? null,
    files: createFileIndex(db, snapshots),
    materials: createMaterialRepository(db, snapshots),
    aiUsage: createAiUsageStore(db),
    outbox: createOutbox(db),
    documents: createDocumentRepository(db),
    uploads: createUploadLedger(db),
    ping: () => guarded(async () => void (await sql`select 1`.execute(db))),
    migrate: () => migrateToLatest(db),
    unknownMigrations: () => unknownMigrations(db),
    backup: (file) => backupTo(db, dialect, file),
    close: () => {
      closing ??= db.destroy()
      return closing
    },
  }
}

/** Works on both SQLite engines (unlike their two backup APIs), and never blocks writers. */
async function backupTo(
  db: Kysely<DbSchema>,
  dialect: MetadataStore['dialect'],
  file: string,
): Promise<void> {
  if (dialect !== 'sqlite')
    throw new UeError('UE_INDEX_FAILED', {
      detail: 'a PostgreSQL index is backed up with pg_dump (docs/operations.md)',
    })
  const target = resolve(file)
  const partial = `${target}.${process.pid}.partial`
  try {
    await rm(partial, { force: true })
    await sql`vacuum into ${partial}`.execute(db)
    const handle = await open(partial, 'r+')
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(partial, target)
  } catch (cause) {
    await rm(partial, { force: true }).catch(() => {})
    const reason = cause instanceof Error ? `: ${cause.message}` : ''
    throw new UeError('UE_INDEX_FAILED', { detail: `cannot write ${target}${reason}`, cause })
  }
}
