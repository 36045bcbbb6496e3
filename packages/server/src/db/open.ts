import { mkdir } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { CamelCasePlugin, Kysely, PostgresDialect, SqliteDialect } from 'kysely'
import type { Pool } from 'pg'
import { UeError } from '../shared/errors.js'
import { createFileIndex } from './file-index.js'
import { createMaterialRepository } from './material-repo.js'
import { migrateToLatest } from './migrations.js'
import type { DbSchema } from './schema.js'
import type { MetadataStore } from './types.js'

export interface SqliteIndexConfig {
  driver: 'sqlite'
  /** A file path, or ':memory:'. */
  file: string
}

export interface PostgresIndexConfig {
  driver: 'postgres'
  /** postgres:// or postgresql://; may hold a password, so it never appears in a message. */
  url: string
  /** Connections this process keeps at most. */
  poolSize: number
}

/** One member per dialect; `driver` discriminates. */
export type IndexConfig = SqliteIndexConfig | PostgresIndexConfig

export async function openMetadataStore(cfg: IndexConfig): Promise<MetadataStore> {
  switch (cfg.driver) {
    case 'sqlite':
      return storeOver(await openSqlite(cfg), 'sqlite')
    case 'postgres':
      return storeOver(await openPostgres(cfg), 'postgres')
  }
}

async function openSqlite(cfg: SqliteIndexConfig): Promise<Kysely<DbSchema>> {
  try {
    if (cfg.file !== ':memory:') await mkdir(dirname(resolve(cfg.file)), { recursive: true })
    const { default: Database } = await import('better-sqlite3')
    const sqlite = new Database(cfg.file)
    try {
      sqlite.pragma('journal_mode = WAL')
      sqlite.pragma('busy_timeout = 5000')
      sqlite.pragma('foreign_keys = ON')
      sqlite.pragma('synchronous = NORMAL')
    } catch (e) {
      sqlite.close()
      throw e
    }
    return new Kysely<DbSchema>({
      dialect: new SqliteDialect({ database: sqlite }),
      plugins: [new CamelCasePlugin()],
    })
  } catch (cause) {
    throw new UeError('UE_INDEX_FAILED', { detail: 'cannot open the SQLite index', cause })
  }
}

async function openPostgres(cfg: PostgresIndexConfig): Promise<Kysely<DbSchema>> {
  const target = describeTarget(cfg.url)
  let pool: Pool | undefined
  try {
    const { default: pg } = await import('pg')
    pool = new pg.Pool({ connectionString: cfg.url, max: cfg.poolSize })
    // An idle connection that breaks (server restart) is dropped by the pool and reported
    // through this event; without a listener it would crash the process. The next query fails
    // on its own, and that failure is what callers see.
    pool.on('error', () => {})
    // The pool connects lazily: connect once now so a wrong URL fails at startup.
    const client = await pool.connect()
    client.release()
    return new Kysely<DbSchema>({
      dialect: new PostgresDialect({ pool }),
      plugins: [new CamelCasePlugin()],
    })
  } catch (cause) {
    await pool?.end().catch(() => {})
    const reason = redact(cause instanceof Error ? cause.message : String(cause), cfg.url)
    throw new UeError('UE_INDEX_FAILED', {
      detail: `cannot connect to PostgreSQL at ${target}: ${reason}`,
      cause,
    })
  }
}

/** host:port/database of a connection URL, without user or password. */
function describeTarget(url: string): string {
  try {
    const u = new URL(url)
    return `${u.hostname || 'the local socket'}${u.port ? `:${u.port}` : ''}${u.pathname}`
  } catch {
    return 'the configured URL'
  }
}

/** Drivers should not echo credentials, but an error message must never carry them. */
function redact(message: string, url: string): string {
  let password = ''
  try {
    password = decodeURIComponent(new URL(url).password)
  } catch {}
  let out = message.replaceAll(url, '<url>')
  if (password !== '') out = out.replaceAll(password, '***')
  return out
}

function storeOver(db: Kysely<DbSchema>, dialect: MetadataStore['dialect']): MetadataStore {
  let closing: Promise<void> | undefined
  return {
    dialect,
    files: createFileIndex(db),
    materials: createMaterialRepository(db),
    migrate: () => migrateToLatest(db),
    close: () => {
      closing ??= db.destroy()
      return closing
    },
  }
}
