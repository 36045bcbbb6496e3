import { readFileSync } from 'node:fs'
import pg from 'pg'
import { type PostgresCluster, startPostgresLane } from '../tests/helpers/postgres.js'
import { fmt, withCpu } from './context.js'
import { type ServerProcess, treeCpuMicros } from './processes.js'

/**
 * One throwaway PostgreSQL cluster for the run, started by the first scenario that asks for a
 * database, the way the test suite starts its own (tests/helpers/postgres.ts: initdb and
 * pg_ctl on a free loopback port, in a temp folder); run.ts stops it after the last load.
 */
let cluster: Promise<PostgresCluster | { unavailable: string }> | undefined

/** Why the PostgreSQL rows are skipped on this machine; with CI=true the run fails instead. */
export class PostgresUnavailable extends Error {}

/** A new empty database in the run's cluster, as a URL for `index.url`. */
export async function postgresDatabase(): Promise<string> {
  cluster ??= startPostgresLane().then((lane) => ('cluster' in lane ? lane.cluster : lane))
  const started = await cluster
  if ('unavailable' in started) {
    const reason = `PostgreSQL rows not run: ${started.unavailable}`
    if (process.env.CI === 'true') throw new Error(`required on CI: ${reason}`)
    throw new PostgresUnavailable(reason)
  }
  return started.createDatabase()
}

/** Stops the cluster if one was started, and removes its folder. */
export async function stopPostgres(): Promise<void> {
  const started = await cluster?.catch(() => undefined)
  if (started && 'stop' in started) await started.stop()
}

/** CPU time so far of the cluster serving `url` (its postmaster and every backend), in µs. */
export async function postgresCpu(url: string): Promise<() => number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid')
    const status = readFileSync(`/proc/${rows[0]?.pid}/status`, 'utf8')
    const postmaster = Number(/^PPid:\s+(\d+)/m.exec(status)?.[1])
    return () => treeCpuMicros(postmaster)
  } finally {
    await client.end()
  }
}

/** CPU µs per request of the measured server and, on PostgreSQL, of its cluster. */
export interface CpuPerRequest {
  server: number
  database?: number
}

export const cpuText = (cpu: CpuPerRequest) =>
  `server ${fmt(cpu.server)} µs` +
  (cpu.database === undefined ? '' : `, PostgreSQL ${fmt(cpu.database)} µs`)

/** `work` (a load), with the CPU per request it cost the server and `database` (postgresCpu). */
export async function withCpuPerRequest<T extends { requests: number }>(
  server: ServerProcess,
  database: (() => number) | undefined,
  work: () => Promise<T>,
): Promise<{ result: T; cpu: CpuPerRequest }> {
  const databaseBefore = database?.()
  const { result, cpuMicros } = await withCpu(server, work)
  const cpu: CpuPerRequest = { server: cpuMicros / result.requests }
  if (database !== undefined && databaseBefore !== undefined)
    cpu.database = (database() - databaseBefore) / result.requests
  return { result, cpu }
}
