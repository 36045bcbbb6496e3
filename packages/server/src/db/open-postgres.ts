import type { Pool } from 'pg'
import { CamelCasePlugin, Kysely, PostgresDialect } from '#kysely'
import { UeError } from '../shared/errors.js'
import { importOptional } from '../shared/optional-deps.js'
import { namingPool } from './named-statements.js'
import type { PostgresIndexConfig } from './open.js'
import { createPostgresReads } from './postgres-reads.js'
import { readThrough } from './query-steps.js'
import type { DbSchema } from './schema.js'

/** A pool of `cfg.poolSize` connections, tried once, under Kysely with the hot reads beside it. */
export async function openPostgres(
  cfg: PostgresIndexConfig,
): Promise<{ db: Kysely<DbSchema>; pool: Pool }> {
  const target = describeTarget(cfg.url)
  const { default: pg } = await importOptional('pg', 'index.driver "postgres"', () => import('pg'))
  let pool: Pool | undefined
  try {
    // Bounded waits: a stopped or unreachable database fails requests fast instead of holding them.
    pool = new pg.Pool({
      connectionString: cfg.url,
      max: cfg.poolSize,
      connectionTimeoutMillis: cfg.connectTimeoutMs ?? 5_000,
      query_timeout: cfg.queryTimeoutMs ?? 30_000,
    })
    // An idle connection that breaks (server restart) is dropped by the pool and reported
    // through this event; without a listener it would crash the process. The next query fails
    // on its own, and that failure is what callers see.
    pool.on('error', () => {})
    // A connection that breaks while checked out (between Kysely taking it and its query, or
    // after a query's answer) emits `error` on the client itself, where the pool's listener is
    // not; without this one a database restart would end the process. The pool drops such a
    // client when it is released, and the query that used it fails on its own.
    pool.on('connect', (client) => client.on('error', () => {}))
    // The pool connects lazily: connect once now so a wrong URL fails at startup.
    const client = await pool.connect()
    client.release()
    const preparedStatements = cfg.preparedStatements ?? true
    const db = new Kysely<DbSchema>({
      dialect: postgresDialect(pool, preparedStatements),
      plugins: [new CamelCasePlugin()],
    })
    readThrough(db, createPostgresReads(pool, preparedStatements))
    return { db, pool }
  } catch (cause) {
    await pool?.end().catch(() => {})
    const reason = redact(cause instanceof Error ? cause.message : String(cause), cfg.url)
    throw new UeError('UE_INDEX_FAILED', {
      detail: `cannot connect to PostgreSQL at ${target}: ${reason}`,
      cause,
    })
  }
}

/** The dialect over `pool`; `preparedStatements`: the hot statements go by name (named-statements.ts). */
export function postgresDialect(pool: Pool, preparedStatements: boolean): PostgresDialect {
  return new PostgresDialect({ pool: preparedStatements ? namingPool(pool) : pool })
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
