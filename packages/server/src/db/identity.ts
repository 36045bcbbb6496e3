import { type Kysely, PostgresAdapter, sql } from '#kysely'

// biome-ignore lint/suspicious/noExplicitAny: works on any schema, including during migrations
type AnyDb = Kysely<any>

export function isPostgres(db: AnyDb): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter
}

/**
 * After a row is saved with an explicit id: SQLite's autoincrement already continues after the
 * largest id, but a PostgreSQL identity sequence does not, so its next generated id would clash.
 * The sequence only ever moves forward here, so a concurrent insert that has already taken a
 * larger id is never handed that id again.
 */
export async function advanceIdentityPast(
  db: AnyDb,
  table: 'categories' | 'materials',
  id: number,
): Promise<void> {
  if (!isPostgres(db)) return
  await sql`
    select setval(s.seq, ${id})
    from (select pg_get_serial_sequence(${table}, 'id')::regclass as seq) as s
    where coalesce(pg_sequence_last_value(s.seq), 0) < ${id}
  `.execute(db)
}
