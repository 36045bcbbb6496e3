import { type ChildProcess, spawn } from 'node:child_process'
import type { Socket } from 'node:net'
import { freePort } from './ports.js'
import { untilAnswering } from './server-process.js'

/** How to get moto's server where it is missing (the machines of this project come with it). */
export const MOTO_INSTALL_HINT =
  'moto_server (moto 5.2, the mock AWS server) is not on PATH; install it with ' +
  `pip install 'moto[server]==5.2.1'`

export interface MotoProcess {
  /** moto's own port on 127.0.0.1. */
  port: number
  /** Ends moto (the shell sends it SIGTERM) and waits for the shell; safe to call twice. */
  close(): Promise<void>
}

/**
 * The shell between this process and moto: moto never reads its stdin, so the shell keeps
 * the pipe this process holds and ends moto when it closes, which it does when this process
 * exits by any means (a failed test, a SIGKILL of the test runner, `close()`).
 */
const WATCHDOG = `
exec 3<&0
moto_server -H 127.0.0.1 -p "$1" </dev/null 3<&- &
moto=$!
{ cat <&3 >/dev/null; kill "$moto" 2>/dev/null; } &
wait "$moto"
`

/**
 * moto's server (`moto_server`, all of AWS in memory) on a free port of 127.0.0.1, for its S3.
 * `MOTO_DISABLE_GLOBAL_CORS` leaves CORS to the bucket's own rules, as on S3 (moto otherwise
 * lets every origin read every answer).
 */
export async function startMoto(): Promise<MotoProcess> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    try {
      return await startOn(port)
    } catch (e) {
      // Another process may have taken the port between the probe and moto's start.
      if (attempt >= 3 || !/already in use/i.test(String(e))) throw e
    }
  }
}

async function startOn(port: number): Promise<MotoProcess> {
  const child: ChildProcess = spawn('sh', ['-c', WATCHDOG, 'moto', String(port)], {
    stdio: ['pipe', 'ignore', 'pipe'],
    env: { ...process.env, MOTO_DISABLE_GLOBAL_CORS: 'true' },
  })
  // Werkzeug logs every request to stderr: keep the end, for an error message.
  let log = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-4000)
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  // A test file that never calls close() still ends; its exit closes the pipe, and moto goes.
  child.unref()
  for (const pipe of [child.stdin, child.stderr]) (pipe as unknown as Socket | null)?.unref()
  let closing: Promise<void> | undefined
  const close = () => {
    closing ??= (async () => {
      child.stdin?.end()
      const killed = setTimeout(() => child.kill('SIGKILL'), 5_000)
      await exited
      clearTimeout(killed)
    })()
    return closing
  }

  try {
    await untilAnswering(child, {
      probe: async () => {
        const res = await fetch(`http://127.0.0.1:${port}/moto-api/`, {
          signal: AbortSignal.timeout(2_000),
        })
        await res.arrayBuffer()
        return res.ok || `answered ${res.status}`
      },
      what: `moto_server answering on port ${port}`,
      output: () => log,
      timeoutMs: 30_000,
    })
  } catch (e) {
    await close()
    const missing = /moto_server: (?:command )?not found/.test(log)
    throw missing ? new Error(MOTO_INSTALL_HINT) : e
  }
  return { port, close }
}
