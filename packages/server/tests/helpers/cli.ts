import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const MAIN = fileURLToPath(new URL('../../bin/ueditor-server.cjs', import.meta.url))

export interface Finished {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs the ueditor-server binary to its end with only PATH and `env` set. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string) {
  return runToEnd(process.execPath, [MAIN, ...args], env, cwd)
}

/** Runs `command` to its end with only PATH and `env` set; its exit code and what it wrote. */
export function runToEnd(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  cwd?: string,
): Promise<Finished> {
  const child = spawn(command, args, {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(cwd ? { cwd } : {}),
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c) => {
    stdout += c
  })
  child.stderr.on('data', (c) => {
    stderr += c
  })
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
}
