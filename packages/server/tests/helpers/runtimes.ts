import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { ServerConfigInput } from '../../src/config/schema.js'

export type Runtime = 'bun' | 'deno'

const HERE = dirname(fileURLToPath(import.meta.url))
/** The server package: Deno resolves the npm packages from its package.json and node_modules. */
const PACKAGE = join(HERE, '..', '..', '..')
const HOST_SCRIPT = join(HERE, 'runtime-host.js')

// Where .ci/runtimes.sh puts the official binaries (from their npm packages).
const CACHE = process.env.UEDITOR_CI_NODE_CACHE ?? join(tmpdir(), 'ueditor-ci-node')
const ARCH =
  process.arch === 'arm64' ? { bun: 'aarch64', deno: 'arm64' } : { bun: 'x64', deno: 'x64' }
const EXECUTABLES: Record<Runtime, string> = {
  bun:
    process.env.UE_TEST_BUN ??
    join(CACHE, 'bun', 'node_modules', '@oven', `bun-linux-${ARCH.bun}`, 'bin', 'bun'),
  deno:
    process.env.UE_TEST_DENO ??
    join(CACHE, 'deno', 'node_modules', '@deno', `linux-${ARCH.deno}-glibc`, 'deno'),
}

const ARGS: Record<Runtime, string[]> = {
  bun: [HOST_SCRIPT],
  // The packages come from the workspace's node_modules; nothing is fetched.
  deno: [
    'run',
    '--allow-all',
    '--node-modules-dir=manual',
    '--no-lock',
    '--cached-only',
    HOST_SCRIPT,
  ],
}

/**
 * Starts `ue.fetch` behind Bun's or Deno's own HTTP server on 127.0.0.1 with a fresh data
 * folder; stopped after the test. Locally a missing runtime skips the test with a reason; with
 * CI=true it is a failure.
 */
export async function startRuntimeHost(
  t: TestContext,
  runtime: Runtime,
  config: ServerConfigInput,
): Promise<string | null> {
  const executable = EXECUTABLES[runtime]
  if (!existsSync(executable)) {
    const hint = `.ci/runtimes.sh installs it (or set UE_TEST_${runtime.toUpperCase()})`
    if (process.env.CI === 'true')
      throw new Error(`${runtime} not found at ${executable} (CI=true)`)
    t.skip(`${runtime} not found at ${executable}; ${hint}`)
    return null
  }
  const dataDir = await mkdtemp(join(tmpdir(), `ueditor-${runtime}-`))
  const child = spawn(executable, ARGS[runtime], {
    cwd: PACKAGE,
    env: {
      ...process.env,
      NO_COLOR: '1',
      // Tests reach loopback only: no update check, no telemetry.
      DENO_NO_UPDATE_CHECK: '1',
      DO_NOT_TRACK: '1',
      UE_RUNTIME_CONFIG: JSON.stringify({ logLevel: 'silent', ...config, dataDir }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.after(async () => {
    await stop(child)
    await rm(dataDir, { recursive: true, force: true })
  })
  return await listeningUrl(child, runtime)
}

function listeningUrl(child: ChildProcess, runtime: Runtime): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = ''
    let err = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk
      const url = /^listening (\S+)$/m.exec(out)?.[1]
      if (url) resolve(url)
    })
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk
    })
    child.once('error', reject)
    child.once('exit', (code) =>
      reject(new Error(`${runtime} exited (${code}) before listening:\n${out}${err}`)),
    )
  })
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((r) => child.once('exit', r))
  child.kill('SIGTERM')
  const late = setTimeout(() => child.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(late)
}
