import type { CompiledQuery, Kysely } from '#kysely'
import type { PostgresReads } from './postgres-reads.js'
import type { DbSchema } from './schema.js'
import type { SyncSnapshots } from './sqlite-snapshots.js'

/**
 * A read written once, as a generator that yields each statement and is handed back its rows,
 * so the same steps run synchronously in a SQLite snapshot or awaited in a Kysely transaction.
 */
export type QuerySteps<T> = Generator<CompiledQuery<unknown>, T, unknown[]>

/** `const rows = yield* rowsOf(query)` inside QuerySteps: the rows, typed as the query's. */
export function* rowsOf<R>(
  query: CompiledQuery<R>,
): Generator<CompiledQuery<unknown>, R[], unknown[]> {
  return (yield query) as R[]
}

/** Databases whose reads go to the `pg` pool directly (postgres-reads.ts), set when opened. */
const direct = new WeakMap<Kysely<DbSchema>, PostgresReads>()

/** The reads below, on `db` itself (not on its transactions), go through `reads`. */
export function readThrough(db: Kysely<DbSchema>, reads: PostgresReads): void {
  direct.set(db, reads)
}

/**
 * Runs `steps` in one snapshot: synchronously where the database offers it (SQLite), else in a
 * repeatable-read transaction (or the transaction `db` already is). Statements are SQL text, so
 * rows come back with the column names the text gives them on either path (Kysely's result
 * plugins leave camel-cased names as they are).
 */
export function readSnapshot<T>(
  db: Kysely<DbSchema>,
  snapshots: SyncSnapshots | undefined,
  steps: () => QuerySteps<T>,
): Promise<T> {
  if (snapshots) return snapshots.read((run) => drive(steps(), run))
  const reads = direct.get(db)
  if (reads !== undefined) return reads.snapshot(steps)
  const inside = async (tx: Kysely<DbSchema>) => {
    const it = steps()
    for (let next = it.next(); ; ) {
      if (next.done) return next.value
      next = it.next((await tx.executeQuery(next.value)).rows)
    }
  }
  // Inside a transaction already (a repository bound to one), the steps read in it.
  if (db.isTransaction) return inside(db)
  return db.transaction().setIsolationLevel('repeatable read').execute(inside)
}

/**
 * The rows of one statement. A lone statement reads one snapshot by itself, so outside SQLite's
 * synchronous path it runs without a transaction around it: on PostgreSQL that is one round
 * trip instead of three (`start transaction`, the statement, `commit`).
 */
export function readOne<R>(
  db: Kysely<DbSchema>,
  snapshots: SyncSnapshots | undefined,
  query: CompiledQuery<R>,
): Promise<R[]> {
  if (snapshots) return snapshots.read((run) => run(query) as R[])
  const reads = direct.get(db)
  if (reads !== undefined) return reads.one(query)
  return db.executeQuery(query).then((result) => result.rows)
}

/**
 * `steps` that yield one statement, run as that statement alone: without a transaction around
 * it, since a lone statement reads one snapshot by itself. More than one is a programming error.
 */
export async function readAlone<T>(db: Kysely<DbSchema>, steps: () => QuerySteps<T>): Promise<T> {
  const it = steps()
  const first = it.next()
  if (first.done) return first.value
  const reads = direct.get(db)
  const rows =
    reads !== undefined ? await reads.one(first.value) : (await db.executeQuery(first.value)).rows
  const next = it.next(rows)
  if (!next.done) throw new Error('readAlone: the steps read more than one statement')
  return next.value
}

function drive<T>(it: QuerySteps<T>, run: (query: CompiledQuery<unknown>) => unknown[]): T {
  for (let next = it.next(); ; ) {
    if (next.done) return next.value
    next = it.next(run(next.value))
  }
}
