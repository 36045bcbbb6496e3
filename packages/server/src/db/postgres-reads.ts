import type { Pool, QueryConfig } from 'pg'
import type { CompiledQuery } from '#kysely'
import { statementName } from './named-statements.js'
import type { QuerySteps } from './query-steps.js'

/*
 * The hot reads on PostgreSQL (a listing page, a search page) go to the `pg` pool directly
 * instead of through Kysely: its connection hand-off, transaction builder, plugin passes and
 * promise chain cost the server more CPU per page than PostgreSQL spent on it. The rows are the
 * same: the statements name their columns as the repository reads them (nothing left for
 * Kysely's camel-case plugin to rename), and the pool's type parsers are the same.
 */

export interface PostgresReads {
  /** Runs `steps` in one repeatable-read transaction on one connection. */
  snapshot<T>(steps: () => QuerySteps<T>): Promise<T>
  /** The rows of one statement, without a transaction around it. */
  one<R>(query: CompiledQuery<R>): Promise<R[]>
}

export function createPostgresReads(pool: Pool, preparedStatements: boolean): PostgresReads {
  const config = (query: CompiledQuery<unknown>): QueryConfig => {
    const values = query.parameters as unknown[]
    const name = preparedStatements ? statementName(query.sql) : undefined
    return name === undefined ? { text: query.sql, values } : { name, text: query.sql, values }
  }
  return {
    async snapshot<T>(steps: () => QuerySteps<T>): Promise<T> {
      const client = await pool.connect()
      let broken: Error | undefined
      try {
        await client.query('start transaction isolation level repeatable read')
        const value = await drive(
          steps(),
          async (query) => (await client.query(config(query))).rows,
        )
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

async function drive<T>(
  it: QuerySteps<T>,
  run: (query: CompiledQuery<unknown>) => Promise<unknown[]>,
): Promise<T> {
  for (let next = it.next(); ; ) {
    if (next.done) return next.value
    next = it.next(await run(next.value))
  }
}
