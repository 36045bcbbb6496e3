import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ServerProcess } from './processes.js'

/** How big and how long; `--smoke` proves the harness on tiny populations in well under a minute. */
export interface Profile {
  smoke: boolean
  /** Seconds of each autocannon run. */
  seconds: number
  /** Seconds of load before a measured run, so both sides are measured warm. */
  warmSeconds: number
  imagePopulations: number[]
  materials: number
  medium: { bytes: number; connections: number; amount: number }
  large: { bytes: number; connections: number; amount: number }
}

const MB = 1024 * 1024

export const FULL: Profile = {
  smoke: false,
  seconds: 10,
  warmSeconds: 2,
  imagePopulations: [10_000, 100_000, 1_000_000],
  materials: 100_000,
  medium: { bytes: 5 * MB, connections: 10, amount: 200 },
  large: { bytes: 100 * MB, connections: 20, amount: 40 },
}

export const SMOKE: Profile = {
  smoke: true,
  seconds: 1,
  warmSeconds: 0,
  imagePopulations: [200, 1_000],
  materials: 500,
  medium: { bytes: 1 * MB, connections: 4, amount: 8 },
  large: { bytes: 8 * MB, connections: 4, amount: 4 },
}

/** The one user the bench signs in as; only it is listed in `limits.exemptUsers`. */
export const BENCH_USER = 'bench'
// A fresh secret per run: the servers the bench starts accept it only while the run lasts.
const BENCH_TOKEN = randomBytes(24).toString('base64url')
export const AUTHORIZATION = { Authorization: `Bearer ${BENCH_TOKEN}` }

/** The configuration every measured server shares: loopback, a fresh data folder, the bench user. */
export function ueditorConfig(dataDir: string, extra: Record<string, unknown> = {}): object {
  return {
    dataDir,
    logLevel: 'warn',
    http: { host: '127.0.0.1', port: 0, errorStatus: 'http' },
    auth: { mode: 'tokens', tokens: [`${BENCH_USER}:${BENCH_TOKEN}`] },
    limits: { exemptUsers: [BENCH_USER] },
    editor: { videoMaxSize: 200 * MB },
    ...extra,
  }
}

/** Runs `work` in a fresh temp folder that is removed afterwards, whatever happens. */
export async function inTempDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'ueditor-bench-'))
  try {
    return await work(dir)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** Starts a server, runs `work` against it, and always stops it. */
export async function using<T>(
  started: Promise<ServerProcess>,
  work: (server: ServerProcess) => Promise<T>,
): Promise<T> {
  const server = await started
  try {
    return await work(server)
  } catch (e) {
    const log = server.recentLog().trim()
    if (log && e instanceof Error) e.message += `\n  ${server.url} wrote:\n${log}`
    throw e
  } finally {
    await server.stop()
  }
}

/** `work`'s result with the CPU time the server process spent meanwhile, in microseconds. */
export async function withCpu<T>(
  server: ServerProcess,
  work: () => Promise<T>,
): Promise<{ result: T; cpuMicros: number }> {
  const before = server.cpuMicros()
  const result = await work()
  return { result, cpuMicros: server.cpuMicros() - before }
}

export const fmt = (v: number, digits = 0) =>
  v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
