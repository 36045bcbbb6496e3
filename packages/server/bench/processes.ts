import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const CLOCK_TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim())
const STANDALONE = fileURLToPath(new URL('../bin/ueditor-server.cjs', import.meta.url))
const BARE = fileURLToPath(new URL('./bare-server.js', import.meta.url))
const START_TIMEOUT_MS = 60_000

/** A server in its own process, so its CPU and memory are measured apart from the load. */
export interface ServerProcess {
  readonly url: string
  readonly pid: number
  /** User and system CPU time the process has used so far, in microseconds. */
  cpuMicros(): number
  /** The system (kernel) part of `cpuMicros`. */
  kernelMicros(): number
  /** The most resident memory the process has held so far (VmHWM), in bytes. */
  peakRssBytes(): number
  /** The resident memory the process holds now (VmRSS), in bytes. */
  rssBytes(): number
  /** The end of what the process wrote on stderr, for a scenario that breaks. */
  recentLog(): string
  stop(): Promise<void>
}

const KEPT_LOG_CHARS = 4_000

/** `ueditor-server` as users run it, configured by a JSON file in `dir` (UEDITOR_CONFIG). */
export async function startUeditor(
  dir: string,
  config: object,
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  const file = join(dir, 'bench-config.json')
  await writeFile(file, JSON.stringify(config, null, 2))
  return launch([STANDALONE], { ...env, UEDITOR_CONFIG: file })
}

/**
 * Milliseconds from spawning `node <args>` to its exit, in the environment the servers get;
 * `standalone` puts the `ueditor-server` binary first. A non-zero exit fails the run.
 */
export function timeToExit(
  args: readonly string[],
  o: { standalone?: boolean } = {},
): Promise<number> {
  const started = performance.now()
  const child = spawn(process.execPath, o.standalone ? [STANDALONE, ...args] : [...args], {
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production' },
    stdio: 'ignore',
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), START_TIMEOUT_MS)
    child.once('error', reject)
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      if (code === 0) resolve(performance.now() - started)
      else reject(new Error(`node ${args.join(' ')} exited with ${code ?? signal}`))
    })
  })
}

/** A bare node:http baseline (bench/bare-server.ts) in the given mode. */
export function startBare(args: string[]): Promise<ServerProcess> {
  return launch([BARE, ...args], {})
}

async function launch(args: string[], env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  // A run ended by Ctrl-C or a kill (run.ts turns both into `exit`) takes its servers along.
  const orphan = () => child.kill('SIGKILL')
  process.once('exit', orphan)
  child.once('exit', () => process.removeListener('exit', orphan))
  const url = await listeningUrl(child)
  const pid = child.pid as number
  let log = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-KEPT_LOG_CHARS)
  })
  return {
    url,
    pid,
    recentLog: () => log,
    cpuMicros: () => cpuTicks(pid, 'both'),
    kernelMicros: () => cpuTicks(pid, 'kernel'),
    peakRssBytes: () => statusBytes(pid, 'VmHWM'),
    rssBytes: () => statusBytes(pid, 'VmRSS'),
    stop: () => stop(child),
  }
}

/** Both the standalone banner and the bare server print `listening on <url>` on stderr. */
function listeningUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = ''
    const timer = setTimeout(
      () => fail(new Error('the server did not start in time')),
      START_TIMEOUT_MS,
    )
    const fail = (e: Error) => {
      clearTimeout(timer)
      child.kill('SIGKILL')
      reject(new Error(`${e.message}\n${text}`))
    }
    const onData = (chunk: Buffer) => {
      text += chunk.toString()
      const m = /listening on (http:\/\/\S+)/.exec(text)
      if (!m) return
      clearTimeout(timer)
      child.stderr?.off('data', onData)
      resolve(m[1] as string)
    }
    child.stderr?.on('data', onData)
    child.once('exit', (code) => fail(new Error(`the server exited with code ${code}`)))
    child.once('error', fail)
  })
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    const hard = setTimeout(() => child.kill('SIGKILL'), 15_000)
    child.once('exit', () => {
      clearTimeout(hard)
      resolve()
    })
    child.kill('SIGTERM')
  })
}

/** `utime + stime` (both) or `stime` alone (kernel), in microseconds. */
function cpuTicks(pid: number, which: 'both' | 'kernel'): number {
  const fields = statFields(pid)
  const system = Number(fields[12])
  const ticks = which === 'kernel' ? system : Number(fields[11]) + system
  return (ticks / CLOCK_TICKS_PER_SECOND) * 1e6
}

/** The fields of /proc/<pid>/stat after the command name (parentheses, may hold spaces). */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
}

/**
 * CPU time, in microseconds, of `parent` and its children, those that ended included (their
 * time is added to the parent's once it has waited for them): a PostgreSQL postmaster and the
 * backends it forked, say. A child that ends during a reading may be missed or counted twice
 * there: a few ticks.
 */
export function treeCpuMicros(parent: number): number {
  const own = statFields(parent)
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14])
  for (const task of readdirSync(`/proc/${parent}/task`))
    for (const child of readFileSync(`/proc/${parent}/task/${task}/children`, 'utf8').split(' '))
      if (child.trim() !== '')
        try {
          const fields = statFields(Number(child))
          ticks += Number(fields[11]) + Number(fields[12])
        } catch {
          // Ended since the list was read: its time is now in the parent's.
        }
  return (ticks / CLOCK_TICKS_PER_SECOND) * 1e6
}

/**
 * The machine's CPU time so far, in clock ticks over every CPU: in all, and the part the
 * hypervisor gave to other guests while this one wanted it (`steal` in /proc/stat).
 */
export function machineCpuTicks(): { total: number; stolen: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]?.trim().split(/\s+/) ?? []
  // cpu user nice system idle iowait irq softirq steal guest guest_nice; guest time is in user.
  const ticks = fields.slice(1, 9).map(Number)
  return { total: ticks.reduce((a, b) => a + b, 0), stolen: ticks[7] ?? 0 }
}

function statusBytes(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]
  if (kb === undefined) throw new Error(`no ${field} for process ${pid}`)
  return Number(kb) * 1024
}
