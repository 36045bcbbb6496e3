import { loadConfig, type ServerConfig } from '../config/load.js'
import { openMetadataStore } from '../db/open.js'
import type { MetadataStore } from '../db/types.js'

/** Opens and migrates the index of the configuration "serve" would use, for one command. */
export async function withStore(
  run: (store: MetadataStore, config: ServerConfig) => Promise<number>,
): Promise<number> {
  const config = loadConfig()
  const store = await openMetadataStore(config.index)
  try {
    await store.migrate()
    return await run(store, config)
  } finally {
    await store.close()
  }
}
