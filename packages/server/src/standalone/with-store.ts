import { stat } from 'node:fs/promises'
import { loadConfig, type ServerConfig } from '../config/load.js'
import { openMetadataStore } from '../db/open.js'
import type { MetadataStore } from '../db/types.js'

export interface WithStoreOptions {
  /** Bring the schema up to date first (default true); a backup copies the file as it is. */
  migrate?: boolean
  /** Create a missing SQLite index (only when the command line asked for it), and say so. */
  create?: boolean
  /** Added to the message about a missing index. */
  hint?: string
}

/**
 * Opens the index of the configuration "serve" would use, for one maintenance command. A SQLite
 * index that does not exist is never created: the command was almost certainly run without the
 * service's settings, and an empty index would report an empty store (or, run as root, leave a
 * file the service cannot open).
 */
export async function withStore(
  run: (store: MetadataStore, config: ServerConfig) => Promise<number>,
  options: WithStoreOptions = {},
): Promise<number> {
  const config = loadConfig()
  if (config.index.driver === 'sqlite' && config.index.file !== ':memory:') {
    const found = await stat(config.index.file).catch(() => null)
    if (!found?.isFile() && !options.create) {
      process.stderr.write(missingIndex(config.index.file, config.dataDir, options.hint))
      return 1
    }
    if (!found) process.stdout.write(`Creating a new index at ${config.index.file}\n`)
  }
  const store = await openMetadataStore(config.index)
  try {
    if (options.migrate !== false) await store.migrate()
    return await run(store, config)
  } finally {
    await store.close()
  }
}

function missingIndex(file: string, dataDir: string, hint = ''): string {
  return (
    `No index at ${file}; this command never creates one.\n` +
    `The server creates it on its first start, in its data folder (now ${dataDir}). So either ` +
    'this command did not get the settings the service runs with (give it the same ' +
    'environment file: ueditor-server --env-file /etc/ueditor/ueditor.env <command>, or set ' +
    'UEDITOR_DATA_DIR / UEDITOR_SQLITE_FILE as the service does; docs/operations.md), or the ' +
    `server has not started on this data folder yet.${hint ? ` ${hint}` : ''}\n`
  )
}
