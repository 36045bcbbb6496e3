import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { png } from '../helpers/fixtures.js'
import { multipartBody } from '../helpers/multipart.js'
import { startTestServer } from '../helpers/start-server.js'

const MAIN = fileURLToPath(new URL('../../src/standalone/main.js', import.meta.url))

test('healthz answers ok while the process runs', async (t) => {
  const srv = await startTestServer(t)
  const res = await fetch(`${srv.url}/healthz`)
  assert.equal(res.status, 200)
  assert.deepEqual(await res.json(), { status: 'ok' })
})

test('readyz answers ready with a small JSON body when the index, storage and disk work', async (t) => {
  const srv = await startTestServer(t)
  const res = await fetch(`${srv.url}/readyz`)
  assert.equal(res.status, 200)
  assert.equal(res.headers.get('cache-control'), 'no-store')
  assert.deepEqual(await res.json(), { status: 'ready' })
})

test('readyz names the disk when free space is below the floor, and nothing else leaves the server', async (t) => {
  const srv = await startTestServer(t, { limits: { minFreeBytes: Number.MAX_SAFE_INTEGER } })
  const res = await fetch(`${srv.url}/readyz`)
  assert.equal(res.status, 503)
  const text = await res.text()
  assert.deepEqual(JSON.parse(text), { status: 'not ready', failed: ['disk'] })
  assert.ok(!text.includes(srv.dataDir), 'no path in the answer')
})

test('many concurrent readyz requests share one round of probes', async (t) => {
  const srv = await startTestServer(t)
  const answers = await Promise.all(
    Array.from({ length: 50 }, () => fetch(`${srv.url}/readyz`).then((r) => r.status)),
  )
  assert.deepEqual(new Set(answers), new Set([200]))
  const scrape = await (await fetch(`${srv.url}/metrics`)).text()
  // Probes go through the counted drivers; a failing round would show as dependency errors.
  assert.doesNotMatch(scrape, /ueditor_dependency_errors_total\{[^}]*\} [1-9]/)
})

test('an unknown path answers a JSON 404', async (t) => {
  const srv = await startTestServer(t)
  const res = await fetch(`${srv.url}/nope`)
  assert.equal(res.status, 404)
  assert.equal((await res.json()).error.code, 'UE_NOT_FOUND')
})

test('closing the server lets an in-flight upload finish and be stored', async (t) => {
  const srv = await startTestServer(t)
  const { body, contentType } = multipartBody([
    { name: 'upfile', filename: 'slow.png', value: png(64, 64) },
  ])
  const half = Math.floor(body.length / 2)
  const answer = new Promise<{ state: string }>((resolve, reject) => {
    const req = request(srv.action('image'), {
      method: 'POST',
      headers: { 'Content-Type': contentType, 'Content-Length': body.length },
    })
    req.on('response', (res) => {
      let text = ''
      res.on('data', (c) => {
        text += c
      })
      res.on('end', () => resolve(JSON.parse(text)))
    })
    req.on('error', reject)
    req.write(body.subarray(0, half))
    setTimeout(() => req.end(body.subarray(half)), 300)
  })
  await new Promise((r) => setTimeout(r, 100))
  const closed = srv.close()
  assert.equal((await answer).state, 'SUCCESS')
  await closed
  assert.equal((await srv.storedFiles()).length, 1)
})

function runMain(env: NodeJS.ProcessEnv, cwd: string) {
  const child = spawn(process.execPath, [MAIN], {
    cwd,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (c) => {
    stderr += c
  })
  return { child, stderr: () => stderr }
}

test('a bad config stops the binary with every problem listed', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ueditor-cli-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  await writeFile(
    join(dir, 'bad.json'),
    JSON.stringify({
      editor: {
        imageMaxSize: -1,
        imageAllowFiles: ['.png', '.svg'],
        imagePathFormat: '{filename}',
      },
      typo: 1,
    }),
  )
  const run = runMain({ UEDITOR_CONFIG: 'bad.json', PORT: 'eighty' }, dir)
  const code = await new Promise((r) => run.child.on('exit', r))
  assert.equal(code, 1)
  const out = run.stderr()
  assert.match(out, /Invalid configuration/)
  for (const fragment of [
    'editor.imageMaxSize',
    'editor.imageAllowFiles',
    '.svg',
    'editor.imagePathFormat',
    'typo',
    'http.port (from PORT=eighty)',
  ])
    assert.ok(out.includes(fragment), `${fragment} missing in:\n${out}`)
})

test('the binary serves on embedded defaults and exits cleanly on SIGTERM', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ueditor-cli-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const run = runMain({ PORT: '0', UEDITOR_LOG_LEVEL: 'silent' }, dir)
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start: ${run.stderr()}`)), 60_000)
    run.child.stderr.on('data', () => {
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(run.stderr())
      if (m) {
        clearTimeout(timer)
        resolve(m[1] as string)
      }
    })
  })
  const config = await (await fetch(`${url}/ueditor?action=config`)).json()
  assert.equal(config.imageActionName, 'image')
  const exited = new Promise((r) => run.child.on('exit', r))
  run.child.kill('SIGTERM')
  assert.equal(await exited, 0)
})
