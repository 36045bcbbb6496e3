import { createHash } from 'node:crypto'
import type { CompiledQuery, PostgresPool, PostgresPoolClient } from '#kysely'

/*
 * PostgreSQL parses and plans a statement sent without a name each time it runs, and for the
 * listing's and the search's statements that costs more than running them (0.15-1.3 ms of
 * planning against 0.04-0.4 ms of execution). A statement marked with `named` is sent by a name
 * derived from its text where the pool names statements: each connection parses it once, and
 * PostgreSQL may then keep one plan for it. Only marked statements are named, so the statements
 * a connection holds stay few: the fixed shapes of the hot reads, a few per page kind.
 */

/** Distinct texts given a name in this process; texts beyond it are sent unnamed. */
const MAX_NAMED = 256

const names = new Map<string, string>()

/** Marks `query` as one to send by name; its text is its identity. Returns `query`. */
export function named<R>(query: CompiledQuery<R>): CompiledQuery<R> {
  if (names.size < MAX_NAMED && !names.has(query.sql))
    names.set(query.sql, `ue_${createHash('sha256').update(query.sql).digest('hex').slice(0, 32)}`)
  return query
}

/** The name `named` gave this statement text, if any. */
export function statementName(text: string): string | undefined {
  return names.get(text)
}

/** The `pg` client's form of a query sent by name (prepared once per connection). */
interface NamingClient {
  query(config: { name: string; text: string; values: unknown[] }): Promise<unknown>
}

/**
 * `pool`, its connections sending the statements marked with `named` by name. Kysely hands a
 * connection each query as text and values; this is where a name can still be added.
 */
export function namingPool(pool: PostgresPool): PostgresPool {
  // The same wrapper for the same connection: Kysely keeps its connection objects per client.
  const wrappers = new WeakMap<PostgresPoolClient, PostgresPoolClient>()
  return {
    async connect() {
      const client = await pool.connect()
      let wrapper = wrappers.get(client)
      if (wrapper === undefined) {
        wrapper = namingClient(client)
        wrappers.set(client, wrapper)
      }
      return wrapper
    },
    end: () => pool.end(),
  }
}

function namingClient(client: PostgresPoolClient): PostgresPoolClient {
  const query = (textOrCursor: unknown, values?: readonly unknown[]) => {
    if (typeof textOrCursor === 'string') {
      const name = names.get(textOrCursor)
      if (name !== undefined)
        return (client as unknown as NamingClient).query({
          name,
          text: textOrCursor,
          values: values as unknown[],
        })
      return client.query(textOrCursor, values ?? [])
    }
    return client.query(textOrCursor as never)
  }
  return { query: query as PostgresPoolClient['query'], release: () => client.release() }
}
