import { execFile, execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { promisify } from 'node:util'
import pg from 'pg'
import { freePort } from './ports.js'

const run = promisify(execFile)

/** A throwaway PostgreSQL cluster on 127.0.0.1, owned by one test file. */
export interface PostgresCluster {
  /** The superuser's password: every URL carries it, no answer or log line may. */
  readonly password: string
  /** Creates an empty database and returns its URL (with the password). */
  createDatabase(): Promise<string>
  /** URL of a database with another password, which the cluster refuses. */
  wrongPasswordUrl(): string
  /** Shuts the server down (open connections end), keeping its data; `resume` starts it again. */
  pause(): Promise<void>
  /** Starts the paused server again on the same port. */
  resume(): Promise<void>
  /** Stops the cluster and removes its folder; safe to call twice. */
  stop(): Promise<void>
}

export type PostgresLane = { cluster: PostgresCluster } | { unavailable: string }

/**
 * Starts a cluster for this test file, or says why the lane cannot run here (no PostgreSQL
 * binaries, or running as root without a `postgres` user). Once the binaries are there, a
 * cluster that fails to start is an error, never a skip.
 */
export async function startPostgresLane(): Promise<PostgresLane> {
  const bin = findBinDir()
  if (bin === null)
    return {
      unavailable:
        'PostgreSQL server binaries (initdb, pg_ctl) not found under `pg_config --bindir`, ' +
        '/usr/lib/postgresql/*/bin or PATH; install the Debian "postgresql" package',
    }
  const owner = clusterOwner()
  if (owner === 'missing')
    return { unavailable: 'running as root, but there is no "postgres" user to run the cluster' }
  return { cluster: await startCluster(bin, owner) }
}

/** Locally the PG lane is skipped with the reason; with CI=true it must run, so it fails. */
export function skipOrFail(t: TestContext, reason: string): void {
  if (process.env.CI === 'true') throw new Error(`PostgreSQL lane required on CI: ${reason}`)
  t.skip(reason)
}

interface Owner {
  uid: number
  gid: number
}

function findBinDir(): string | null {
  const candidates: string[] = []
  try {
    candidates.push(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim())
  } catch {
    // No pg_config: look in the usual places.
  }
  const debian = '/usr/lib/postgresql'
  if (existsSync(debian))
    candidates.push(
      ...readdirSync(debian)
        .filter((v) => /^\d+(\.\d+)?$/.test(v))
        .sort((a, b) => Number(b) - Number(a))
        .map((v) => join(debian, v, 'bin')),
    )
  candidates.push(...(process.env.PATH ?? '').split(':').filter(Boolean))
  return (
    candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) ??
    null
  )
}

/** initdb refuses to run as root: then the cluster belongs to the `postgres` user. */
function clusterOwner(): Owner | 'missing' | null {
  if (process.getuid?.() !== 0) return null
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'))
  const [, , uid, gid] = line?.split(':') ?? []
  return uid && gid ? { uid: Number(uid), gid: Number(gid) } : 'missing'
}

async function startCluster(bin: string, owner: Owner | null): Promise<PostgresCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'ue-pg-'))
  const data = join(dir, 'data')
  const sockets = join(dir, 'sockets')
  const password = randomBytes(18).toString('hex')
  const as = (tool: string, args: string[]) => {
    const [file, argv] = owner
      ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]]
      : [join(bin, tool), args]
    return run(file, argv, { cwd: dir, env: { ...process.env, LC_ALL: 'C' } })
  }
  const pgCtlStop = ['-D', data, '-m', 'immediate', '-w', 'stop']
  // The after() hook stops the cluster; this catches a test process that ends without it.
  const onExit = () => {
    try {
      if (owner)
        execFileSync('runuser', ['-u', 'postgres', '--', join(bin, 'pg_ctl'), ...pgCtlStop])
      else execFileSync(join(bin, 'pg_ctl'), pgCtlStop)
    } catch {
      // Not running.
    }
    rmSync(dir, { recursive: true, force: true })
  }
  process.once('exit', onExit)

  let admin: pg.Client | undefined
  let stopping: Promise<void> | undefined
  const stop = () => {
    stopping ??= (async () => {
      await admin?.end().catch(() => {})
      await as('pg_ctl', pgCtlStop).catch(() => {})
      await rm(dir, { recursive: true, force: true })
      process.removeListener('exit', onExit)
    })()
    return stopping
  }

  try {
    await mkdir(sockets)
    await writeFile(join(dir, 'pwfile'), `${password}\n`)
    if (owner)
      for (const path of [dir, sockets, join(dir, 'pwfile')])
        await chown(path, owner.uid, owner.gid)
    await as('initdb', [
      ...['-D', data, '-U', 'postgres', '--pwfile', join(dir, 'pwfile')],
      ...['--auth-host=scram-sha-256', '--auth-local=trust', '-E', 'UTF8', '--locale=C'],
      '--no-sync',
    ])
    const startOn = (p: number) =>
      as('pg_ctl', [
        ...['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o'],
        // Loopback only, sockets inside the temp folder; durability is not needed here.
        `-c listen_addresses=127.0.0.1 -p ${p} -k ${sockets} -c fsync=off ` +
          '-c synchronous_commit=off -c full_page_writes=off',
        'start',
      ])
    const port = await startOnFreePort(startOn)
    const urlOf = (db: string, pass = password) =>
      `postgres://postgres:${pass}@127.0.0.1:${port}/${db}`
    admin = new pg.Client({ connectionString: urlOf('postgres') })
    // pause() ends this connection too; createDatabase is for before that.
    admin.on('error', () => {})
    await admin.connect()
    const client = admin
    let n = 0
    return {
      password,
      async createDatabase() {
        const name = `store_${++n}`
        await client.query(`create database ${name}`)
        return urlOf(name)
      },
      wrongPasswordUrl: () => urlOf('postgres', `not-${password}`),
      async pause() {
        await as('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop'])
      },
      async resume() {
        await startOn(port)
      },
      stop,
    }
  } catch (e) {
    const log = join(dir, 'server.log')
    const tail = existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : ''
    await stop()
    throw new Error(`cannot start the test PostgreSQL cluster: ${(e as Error).message}\n${tail}`, {
      cause: e,
    })
  }
}

/** A port taken between the probe and the start makes pg_ctl fail: then try another one. */
async function startOnFreePort(start: (port: number) => Promise<unknown>): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    try {
      await start(port)
      return port
    } catch (e) {
      if (attempt >= 3) throw e
    }
  }
}
