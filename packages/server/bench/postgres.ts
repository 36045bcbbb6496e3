import { type PostgresCluster, startPostgresLane } from '../tests/helpers/postgres.js'

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
