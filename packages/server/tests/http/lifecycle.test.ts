import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { connect } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { recordingLogger } from '../helpers/auth.js'
import { eventually } from '../helpers/eventually.js'
import { png } from '../helpers/fixtures.js'
import { firstJsonBody, rawExchange } from '../helpers/hostile.js'
import { multipartBody } from '../helpers/multipart.js'
import { listeningUrl } from '../helpers/server-process.js'
import { metric, startTestServer, type TestServer } from '../helpers/start-server.js'
import { tempDir } from '../helpers/temp-dir.js'
import { test } from '../helpers/test.js'

const MAIN = fileURLToPath(new URL('../../bin/ueditor-server.cjs', import.meta.url))

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
  await inFlight(srv)
  const closed = srv.close()
  assert.equal((await answer).state, 'SUCCESS')
  await closed
  assert.equal((await srv.storedFiles()).length, 1)
})

/** Resolves once the server is handling an upload, so a close lands while it is in flight. */
async function inFlight(srv: TestServer): Promise<void> {
  const n = await eventually(() => metric(srv, 'ueditor_uploads_in_flight'), {
    until: (v) => v >= 1,
    timeoutMs: 10_000,
    what: 'an upload in flight',
  })
  assert.equal(n, 1, 'the upload never reached the server')
}

/** The binary with PATH and `env`, open to anyone on purpose (`UEDITOR_AUTH=none`). */
function runMain(env: NodeJS.ProcessEnv, cwd: string) {
  const child = spawn(process.execPath, [MAIN], {
    cwd,
    env: { PATH: process.env.PATH, UEDITOR_AUTH: 'none', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (c) => {
    stderr += c
  })
  return { child, stderr: () => stderr }
}

test('a bad config stops the binary with every problem listed', async (t) => {
  const dir = await tempDir(t, 'ueditor-cli-')
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
  const dir = await tempDir(t, 'ueditor-cli-')
  const run = runMain({ PORT: '0', UEDITOR_LOG_LEVEL: 'silent' }, dir)
  const url = await listeningUrl(run.child)
  const config = await (await fetch(`${url}/ueditor?action=config`)).json()
  assert.equal(config.imageActionName, 'image')
  const exited = new Promise((r) => run.child.on('exit', r))
  run.child.kill('SIGTERM')
  assert.equal(await exited, 0)
})

/** A keep-alive connection that has had one answer and now sits idle; resolves when it closes. */
async function idleKeepAlive(url: string): Promise<{ closed: Promise<void> }> {
  const socket = connect(Number(new URL(url).port), '127.0.0.1')
  socket.on('error', () => {})
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  let text = ''
  const answered = new Promise<void>((resolve, reject) => {
    socket.on('data', (c) => {
      text += c
      if (text.includes('{"status":"ok"}')) resolve()
    })
    socket.once('close', () => reject(new Error(`closed before its answer: ${text}`)))
  })
  socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
  await answered
  return { closed }
}

test('on SIGTERM the port closes at once, idle connections are closed, uploads in flight finish, and the binary exits 0', async (t) => {
  const dir = await tempDir(t, 'ueditor-cli-')
  const run = runMain(
    { PORT: '0', UEDITOR_LOG_LEVEL: 'silent', UEDITOR_SHUTDOWN_GRACE_MS: '30000' },
    dir,
  )
  t.after(() => run.child.kill('SIGKILL'))
  const url = await listeningUrl(run.child)
  const srv = { url }
  const { body, contentType } = multipartBody([
    { name: 'upfile', filename: 'slow.png', value: png(64, 64, { noise: true }) },
  ])
  const head = `POST /ueditor?action=image HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n\r\n`
  // Three uploads stream their first half now and the rest well after the SIGTERM.
  const inFlight = Array.from({ length: 3 }, () =>
    rawExchange(
      srv,
      [Buffer.concat([Buffer.from(head), body.subarray(0, 2000)]), body.subarray(2000)],
      {
        gapMs: 5_000,
        maxMs: 40_000,
      },
    ),
  )
  const metric = async () => {
    const text = await (await fetch(`${url}/metrics`)).text()
    return /^ueditor_uploads_in_flight (\d+)$/m.exec(text)?.[1]
  }
  assert.equal(
    await eventually(metric, {
      until: (n) => n === '3',
      timeoutMs: 4_000,
      what: 'three uploads in flight',
    }),
    '3',
  )
  const idle = await idleKeepAlive(url)
  const exited = new Promise<number | null>((r) => run.child.on('exit', r))
  const signalled = Date.now()
  run.child.kill('SIGTERM')
  await eventually(async () => run.stderr(), {
    until: (text) => text.includes('SIGTERM received'),
    timeoutMs: 4_000,
    what: 'SIGTERM received, logged',
  })

  // A proxy in front finds the port closed and its idle connection gone, so it moves on to
  // another node by itself, while the uploads go on.
  await idle.closed
  await assert.rejects(
    fetch(`${url}/healthz`),
    (e: Error & { cause?: { code?: string } }) => e.cause?.code === 'ECONNREFUSED',
  )
  for (const exchange of await Promise.all(inFlight)) {
    assert.equal(firstJsonBody(exchange.text)?.state, 'SUCCESS', exchange.text.slice(0, 300))
    assert.match(exchange.text, /\r\nConnection: close\r\n/i, 'the answer ends its connection')
  }
  assert.equal(await exited, 0)
  assert.ok(Date.now() - signalled < 30_000, 'the binary outlived its grace time')
})

test('an embedded server that stops accepting refuses readably: the editor in its shape, readiness 503, liveness 200', async (t) => {
  const srv = await startTestServer(t)
  srv.ue.stopAccepting()
  const { body, contentType } = multipartBody([
    { name: 'upfile', filename: 'late.png', value: png(8, 8) },
  ])
  const refused = await fetch(srv.action('image'), {
    method: 'POST',
    body: new Uint8Array(body),
    headers: { 'Content-Type': contentType },
  })
  assert.equal(refused.status, 200)
  assert.equal(refused.headers.get('retry-after'), '5')
  assert.equal(refused.headers.get('connection'), 'close')
  const answer = await refused.json()
  assert.equal(answer.code, 'UE_SHUTTING_DOWN')
  assert.equal(typeof answer.state, 'string')
  const jsonp = await fetch(srv.action('config', '&callback=cb'))
  assert.match(await jsonp.text(), /^\/\*\*\/cb\(\{.*"code":"UE_SHUTTING_DOWN".*\}\);$/)
  assert.equal((await fetch(`${srv.url}/healthz`)).status, 200)
  const ready = await fetch(`${srv.url}/readyz`)
  assert.equal(ready.status, 503)
  assert.equal((await ready.json()).error.code, 'UE_SHUTTING_DOWN')
  assert.deepEqual(await srv.storedFiles(), [])
})

test('while stopping, a refusal carries HTTP 503 when http.errorStatus is http', async (t) => {
  const srv = await startTestServer(t, { http: { errorStatus: 'http' } })
  srv.ue.stopAccepting()
  const { body, contentType } = multipartBody([
    { name: 'upfile', filename: 'late.png', value: png(8, 8) },
  ])
  const res = await fetch(srv.action('image'), {
    method: 'POST',
    body: new Uint8Array(body),
    headers: { 'Content-Type': contentType },
  })
  assert.equal(res.status, 503)
  assert.equal(res.headers.get('retry-after'), '5')
  assert.equal((await res.json()).code, 'UE_SHUTTING_DOWN')
})

test('a stopping server logs its refusals at info, one line each and without a stack', async (t) => {
  const log = recordingLogger()
  const srv = await startTestServer(t, {}, { logger: log })
  srv.ue.stopAccepting()
  const { body, contentType } = multipartBody([
    { name: 'upfile', filename: 'late.png', value: png(8, 8) },
  ])
  for (let i = 0; i < 3; i++) {
    const refused = await fetch(srv.action('image'), {
      method: 'POST',
      body: new Uint8Array(body),
      headers: { 'Content-Type': contentType },
    })
    assert.equal((await refused.json()).code, 'UE_SHUTTING_DOWN')
  }
  const refusals = log.lines.filter((l) => l.includes('UE_SHUTTING_DOWN'))
  assert.equal(refusals.length, 3, log.lines.join('\n'))
  for (const line of refusals) {
    assert.equal(JSON.parse(line).level, 'info', line)
    assert.doesNotMatch(line, /stack|\\n\s+at /)
  }
  assert.deepEqual(
    log.lines.filter((l) => JSON.parse(l).level === 'error'),
    [],
  )
})

test('a graceful shutdown lets the upload in flight finish, logs no error, and ends with one line saying it stopped and how long it took', async (t) => {
  const dir = await tempDir(t, 'ueditor-cli-')
  const run = runMain(
    { PORT: '0', UEDITOR_LOG_FORMAT: 'json', UEDITOR_SHUTDOWN_GRACE_MS: '30000' },
    dir,
  )
  t.after(() => run.child.kill('SIGKILL'))
  const url = await listeningUrl(run.child)
  const { body, contentType } = multipartBody([
    { name: 'upfile', filename: 'slow.png', value: png(64, 64, { noise: true }) },
  ])
  const head = `POST /ueditor?action=image HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n\r\n`
  // The upload sends its second half well after the SIGTERM, so the shutdown stays open.
  const held = rawExchange(
    { url },
    [Buffer.concat([Buffer.from(head), body.subarray(0, 2000)]), body.subarray(2000)],
    { gapMs: 3_000, maxMs: 40_000 },
  )
  const inFlight = async () =>
    /^ueditor_uploads_in_flight (\d+)$/m.exec(await (await fetch(`${url}/metrics`)).text())?.[1]
  assert.equal(
    await eventually(inFlight, {
      until: (n) => n === '1',
      timeoutMs: 4_000,
      what: 'one upload in flight',
    }),
    '1',
  )
  const exited = new Promise<number | null>((r) => run.child.on('exit', r))
  run.child.kill('SIGTERM')
  assert.equal(firstJsonBody((await held).text)?.state, 'SUCCESS')
  assert.equal(await exited, 0)

  const lines = run.stderr().trimEnd().split('\n')
  const json = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l))
  assert.deepEqual(
    json.filter((l) => l.level === 'error'),
    [],
  )
  assert.match(lines.at(-1) ?? '', /^ueditor-server stopped after SIGTERM in \d+\.\d s$/)
  assert.equal(lines.filter((l) => l.includes('stopped after')).length, 1)
})
