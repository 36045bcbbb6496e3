import type { CompiledQuery } from 'kysely'
import type { Pool, QueryConfig } from 'pg'
import { statementName } from './named-statements.js'
import type { QuerySteps } from './query-steps.js'

/*
 * The hot reads on PostgreSQL (a listing page, a search page) go to the `pg` pool directly
 * instead of through Kysely: its connection hand-off, transaction builder, plugin passes and
 * promise chain cost the server more CPU per page than PostgreSQL spent on it. The rows are the
 * same: the statements name their columns as the repository reads them (nothing left for
 * Kysely's camel-case plugin to rename), and the pool's type parsers are the same.
 *
 * `plans: 'generic'` (with named statements) sets `plan_cache_mode = force_generic_plan` for
 * the snapshot's own transaction, in the message that begins it. PostgreSQL otherwise plans a
 * listing's page statement again at every execution: it estimates the generic plan, with the
 * `limit` unknown, dearer than a custom one, yet at 10k, 100k and 1M files the two are the same
 * index range (docs/benchmarks.md). A statement with an `offset` goes back to the default
 * first: there the generic plans are worse (a walk that filters on a list of parameters
 * rebuilds the list for every row; a search page joins by hash instead of by index), and
 * such a statement (a deep jump's walk) costs far more than its planning anyway. `set local`
 * ends with the transaction, so every other statement of the connection keeps the default.
 */

export interface PostgresReads {
  /**
   * Runs `steps` in one repeatable-read transaction on one connection; `plans: 'generic'`:
   * its named statements run on their generic plans (see above).
   */
  snapshot<T>(steps: () => QuerySteps<T>, plans?: Plans): Promise<T>
  /** The rows of one statement, without a transaction around it. */
  one<R>(query: CompiledQuery<R>): Promise<R[]>
}

/** 'generic': only for reads whose generic plans were checked to be the custom ones. */
export type Plans = 'custom' | 'generic'

export function createPostgresReads(pool: Pool, preparedStatements: boolean): PostgresReads {
  // One simple-protocol message: the `set local` costs no round trip of its own.
  const begin = 'start transaction isolation level repeatable read'
  const beginGeneric = `${begin}; set local plan_cache_mode = force_generic_plan`
  const config = (query: CompiledQuery<unknown>): QueryConfig => {
    const values = query.parameters as unknown[]
    const name = preparedStatements ? statementName(query.sql) : undefined
    return name === undefined ? { text: query.sql, values } : { name, text: query.sql, values }
  }
  return {
    async snapshot<T>(steps: () => QuerySteps<T>, plans: Plans = 'custom'): Promise<T> {
      const client = await pool.connect()
      let broken: Error | undefined
      try {
        let generic = plans === 'generic' && preparedStatements
        await client.query(generic ? beginGeneric : begin)
        const run = async (query: CompiledQuery<unknown>) => {
          if (generic && (OFFSET.test(query.sql) || statementName(query.sql) === undefined)) {
            await client.query('set local plan_cache_mode = auto')
            generic = false
          }
          return (await client.query(config(query))).rows
        }
        const value = await drive(steps(), run)
        await client.query('commit')
        return value
      } catch (e) {
        await client.query('rollback').catch((cause: unknown) => {
          broken = cause instanceof Error ? cause : new Error(String(cause))
        })
        throw e
      } finally {
        // A connection that could not even roll back is closed instead of reused.
        client.release(broken)
      }
    },
    async one<R>(query: CompiledQuery<R>): Promise<R[]> {
      return (await pool.query(config(query))).rows as R[]
    },
  }
}

/** An `offset` clause: statements that keep custom plans (as do those sent without a name). */
const OFFSET = /\boffset\s/i

async function drive<T>(
  it: QuerySteps<T>,
  run: (query: CompiledQuery<unknown>) => Promise<unknown[]>,
): Promise<T> {
  for (let next = it.next(); ; ) {
    if (next.done) return next.value
    next = it.next(await run(next.value))
  }
}
