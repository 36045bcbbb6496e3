import { mkdir } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { CamelCasePlugin, Kysely, SqliteDialect } from 'kysely'
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

/** One member per dialect; `driver` discriminates. */
export type IndexConfig = SqliteIndexConfig

export async function openMetadataStore(cfg: IndexConfig): Promise<MetadataStore> {
  switch (cfg.driver) {
    case 'sqlite':
      return storeOver(await openSqlite(cfg), 'sqlite')
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
