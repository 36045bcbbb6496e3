import { type Expression, type Kysely, sql } from '#kysely'
import { isPostgres } from './identity.js'

// biome-ignore lint/suspicious/noExplicitAny: works on any schema, including during migrations
type AnyDb = Kysely<any>

/**
 * The `key` column compared by its bytes, the order storage drivers list in. SQLite's default
 * BINARY collation already is; PostgreSQL's depends on the database's locale, so it is named.
 * `files_key_bytes_idx` (migration 0004) serves this order on PostgreSQL.
 */
export function keyInByteOrder(db: AnyDb): Expression<string> {
  return isPostgres(db) ? sql<string>`key collate "C"` : sql<string>`key`
}
