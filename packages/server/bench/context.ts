import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { machineCpuTicks, type ServerProcess } from './processes.js'

/** How big and how long; `--smoke` proves the harness on tiny populations in well under a minute. */
export interface Profile {
  smoke: boolean
  /** Seconds of each autocannon run. */
  seconds: number
  /** Seconds of load before a measured run, so both sides are measured warm. */
  warmSeconds: number
  /**
   * Where CPU per request is the target: requests answered before measuring, at least (after
   * `warmSeconds`). At a few hundred uploads a second, 2 s leave V8 still compiling the
   * server's code on its worker threads, a cost a running server has long paid.
   */
  warmRequests: number
  imagePopulations: number[]
  /**
   * `--big`: one more image population for the SQLite listing (10M files), built once in the
   * cache folder and reused by later runs.
   */
  big?: { images: number; cacheDir: string }
  materials: number
  /**
   * Large uploads: `amount` measured after `warmAmount` unmeasured ones. A fresh server's first
   * uploads run code V8 has not compiled yet; a 5 MB load lasts only seconds, so they would
   * weigh on its figure (the 100 MB load is long enough to carry them).
   */
  medium: LargeUploads
  large: LargeUploads
  /** One upload through tus, against the bare stream-to-disk of the same body. */
  resumable: { bytes: number }
}

export interface LargeUploads {
  bytes: number
  connections: number
  amount: number
  warmAmount: number
}

const MB = 1024 * 1024

export const FULL: Profile = {
  smoke: false,
  seconds: 10,
  warmSeconds: 2,
  warmRequests: 3_000,
  imagePopulations: [10_000, 100_000, 1_000_000],
  materials: 100_000,
  medium: { bytes: 5 * MB, connections: 10, amount: 400, warmAmount: 100 },
  large: { bytes: 100 * MB, connections: 20, amount: 40, warmAmount: 0 },
  resumable: { bytes: 1024 * MB },
}

export const SMOKE: Profile = {
  smoke: true,
  seconds: 1,
  warmSeconds: 0,
  warmRequests: 0,
  imagePopulations: [200, 1_000],
  materials: 500,
  medium: { bytes: 1 * MB, connections: 4, amount: 8, warmAmount: 0 },
  large: { bytes: 8 * MB, connections: 4, amount: 4, warmAmount: 0 },
  resumable: { bytes: 16 * MB },
}

/**
 * `profile` with no population above `largest`: the image populations above it are left out
 * (if none is left, `largest` itself is used), and the materials are at most `largest`.
 */
export function upTo(profile: Profile, largest: number): Profile {
  const kept = profile.imagePopulations.filter((n) => n <= largest)
  return {
    ...profile,
    imagePopulations: kept.length > 0 ? kept : [largest],
    materials: Math.min(profile.materials, largest),
  }
}

/** The one user the bench signs in as; only it is listed in `limits.exemptUsers`. */
export const BENCH_USER = 'bench'
// A fresh secret per run: the servers the bench starts accept it only while the run lasts.
const BENCH_TOKEN = randomBytes(24).toString('base64url')
export const AUTHORIZATION = { Authorization: `Bearer ${BENCH_TOKEN}` }
/** The bench user's `auth.tokens` entry, for a scenario that signs in other users beside it. */
export const BENCH_TOKEN_ENTRY = `${BENCH_USER}:${BENCH_TOKEN}`

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

/*
 * Every folder the run writes lives under one scratch folder, removed only when the run is over.
 * On ext4 without a journal (this project's machines), the kernel will not reuse an inode for up
 * to five minutes after its file was deleted, and every file created meanwhile in that block
 * group first steps over each such inode: deleting one side's 38,000 uploads made the other
 * side's next load spend a quarter of its CPU time creating files. Nothing is deleted while
 * the run measures, so no load pays for another's deletions.
 */
let scratch: Promise<string> | undefined

/** Runs `work` in a fresh folder under the run's scratch folder (see `removeScratch`). */
export async function inTempDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  scratch ??= mkdtemp(join(tmpdir(), 'ueditor-bench-'))
  return work(await mkdtemp(join(await scratch, 'scenario-')))
}

/** Removes everything the run wrote; run.ts calls it once, after the last load. */
export async function removeScratch(): Promise<void> {
  if (scratch) await rm(await scratch, { recursive: true, force: true })
}

/**
 * Waits until what the last load wrote is on disk, so the next load does not share the disk
 * with its write-back: every file a side stored stays, as the server keeps every upload.
 */
export function settle(): Promise<void> {
  return new Promise((resolve, reject) => execFile('sync', (e) => (e ? reject(e) : resolve())))
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

/**
 * `work`'s result with the CPU time the server process spent meanwhile, in microseconds: in
 * all (user and kernel, every thread) and in the kernel alone; and the share of the machine's
 * CPU time the hypervisor took for other guests meanwhile (0 to 1), which slows every process
 * here alike and says how far a wall-clock figure of this load can be trusted.
 */
export async function withCpu<T>(
  server: ServerProcess,
  work: () => Promise<T>,
): Promise<{ result: T; cpuMicros: number; kernelMicros: number; stolenShare: number }> {
  const before = server.cpuMicros()
  const kernelBefore = server.kernelMicros()
  const machineBefore = machineCpuTicks()
  const result = await work()
  return {
    result,
    cpuMicros: server.cpuMicros() - before,
    kernelMicros: server.kernelMicros() - kernelBefore,
    stolenShare: stolenSince(machineBefore),
  }
}

/** The share (0 to 1) of the machine's CPU time stolen since `before` was read. */
export function stolenSince(before: ReturnType<typeof machineCpuTicks>): number {
  const now = machineCpuTicks()
  const total = now.total - before.total
  return total > 0 ? (now.stolen - before.stolen) / total : 0
}

/** How a load's stolen share reads in the table. */
export const stolenText = (share: number) => `${fmt(share * 100)}% stolen`

export const fmt = (v: number, digits = 0) =>
  v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
