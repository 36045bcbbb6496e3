#!/usr/bin/env node
// Part of `npm run build`, last: saves V8's code cache of a server start beside the binary's
// bundle (packages/server/dist/bin/server.cjs.v8-cache), which the bin loads it with
// (scripts/server-binary-loader.cjs). The cache is taken from a real start on the defaults, in
// a new data folder, once `/readyz` answers: it then holds every function a start compiled, so
// the next start compiles none of them. Made by this Node for this Node: another version's V8
// refuses it, and the bundle is compiled as if there were none.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const loader = fileURLToPath(
  new URL('../packages/server/dist/bin/ueditor-server.cjs', import.meta.url),
)
const DEADLINE_MS = 60_000

const dir = mkdtempSync(join(tmpdir(), 'ueditor-code-cache-'))
const configFile = join(dir, 'config.json')
writeFileSync(
  configFile,
  JSON.stringify({ dataDir: join(dir, 'data'), http: { host: '127.0.0.1', port: 0 } }),
)

// The child starts the server as the bin does, and writes the cache when told to.
const child = spawn(
  process.execPath,
  [
    '-e',
    `const { compileBundle, runBundle, CODE_CACHE } = require(${JSON.stringify(loader)})
const script = compileBundle()
runBundle(script)
process.once('message', () => {
  require('node:fs').writeFileSync(CODE_CACHE, script.createCachedData())
  process.exit(0)
})`,
  ],
  {
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: dir, NODE_ENV: 'production', UEDITOR_CONFIG: configFile },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  },
)
let output = ''
child.stdout.on('data', (chunk) => {
  output += chunk
})
child.stderr.on('data', (chunk) => {
  output += chunk
})
const exited = new Promise((resolve) => child.once('exit', resolve))

try {
  const deadline = Date.now() + DEADLINE_MS
  const left = () => Math.max(1, deadline - Date.now())
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server stopped:\n${output}`)
    if (Date.now() > deadline) throw new Error(`the server was not ready in time:\n${output}`)
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(output)?.[0]
    const signal = AbortSignal.timeout(left())
    const ready = url && (await fetch(`${url}/readyz`, { signal }).catch(() => undefined))
    if (ready?.status === 200) break
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  child.send('save')
  const late = setTimeout(() => child.kill('SIGKILL'), left())
  const code = await exited
  clearTimeout(late)
  if (code !== 0) throw new Error(`saving the code cache failed (exit ${code}):\n${output}`)
} finally {
  child.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
}
