import type { ChildProcess } from 'node:child_process'
import { eventually } from './eventually.js'

/**
 * The address in the banner of a spawned `ueditor-server` ("listening on http://127.0.0.1:N").
 * Call it right after the spawn: it reads stderr from then on. Fails with what the process wrote
 * when it exits first or prints no banner within `timeoutMs`.
 */
export function listeningUrl(child: ChildProcess, timeoutMs = 60_000): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let stderr = ''
    const settle = (done: () => void) => {
      clearTimeout(timer)
      child.stderr?.off('data', read)
      child.off('exit', exited)
      done()
    }
    const read = (chunk: Buffer | string) => {
      stderr += chunk
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr)
      if (m) settle(() => resolve(m[1] as string))
    }
    const exited = (code: number | null) =>
      settle(() => reject(new Error(`exited with ${code} before listening:\n${stderr}`)))
    const timer = setTimeout(
      () => settle(() => reject(new Error(`no banner within ${timeoutMs} ms:\n${stderr}`))),
      timeoutMs,
    )
    child.stderr?.on('data', read)
    child.once('exit', exited)
  })
}

/** Resolves once `url/readyz` answers 200; see `untilAnswering`. */
export function untilReady(
  child: ChildProcess,
  url: string,
  output: () => string,
  timeoutMs = 60_000,
): Promise<void> {
  return untilAnswering(child, {
    probe: async () => {
      const answer = await fetch(`${url}/readyz`)
      await answer.arrayBuffer()
      return answer.status === 200 || `readyz answered ${answer.status}`
    },
    what: `${url}/readyz answering 200`,
    output,
    timeoutMs,
  })
}

/**
 * Resolves once the spawned process answers: `probe` returns true (a throw or another value is
 * "not yet", and is named if the time runs out). Fails at once when the process exits first,
 * and after `timeoutMs` otherwise, both with what it wrote.
 */
export async function untilAnswering(
  child: ChildProcess,
  o: {
    probe: () => Promise<true | string>
    what: string
    output: () => string
    timeoutMs?: number
  },
): Promise<void> {
  const gone = () => child.exitCode !== null || child.signalCode !== null
  // Refused connections and the like are "not yet", named if the time runs out.
  const probe = () =>
    o.probe().catch((e: Error) => (e.cause ? `${e.message}: ${String(e.cause)}` : e.message))
  const state = await eventually(async () => (gone() ? EXITED : await probe()), {
    until: (s) => s === true || s === EXITED,
    timeoutMs: o.timeoutMs ?? 60_000,
    intervalMs: 100,
    what: o.what,
  }).catch((e: Error) => {
    throw new Error(`${e.message}\n${o.output()}`)
  })
  if (state === EXITED) throw new Error(`exited before ${o.what}:\n${o.output()}`)
}

const EXITED = 'exited'
