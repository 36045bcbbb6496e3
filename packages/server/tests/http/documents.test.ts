import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import type { ServerConfigInput } from '../../src/config/schema.js'
import { startServer } from '../../src/standalone/serve.js'
import { ALICE, BOB, ROOT, TOKENS } from '../helpers/auth.js'
import { eventually } from '../helpers/eventually.js'
import { blob, png } from '../helpers/fixtures.js'
import { listeningUrl } from '../helpers/server-process.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { tempDir } from '../helpers/temp-dir.js'
import { describe, type TestContext, test } from '../helpers/test.js'

const MAIN = fileURLToPath(new URL('../../bin/ueditor-server.cjs', import.meta.url))

const AUTH: ServerConfigInput = {
  auth: { mode: 'tokens', tokens: TOKENS, adminUsers: ['root'] },
  documents: { enabled: true },
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` })

async function upload(srv: TestServer, token: string, name = 'a.png'): Promise<string> {
  const form = new FormData()
  form.append('upfile', blob(png(3, 3)), name)
  const res = await fetch(srv.action('image'), {
    method: 'POST',
    body: form,
    headers: bearer(token),
  })
  const answer = await res.json()
  assert.equal(answer.state, 'SUCCESS', JSON.stringify(answer))
  return answer.url as string
}

function put(
  srv: { url: string },
  id: string,
  token: string | null,
  body: BodyInit,
  type = 'text/html',
) {
  return fetch(`${srv.url}/documents/${encodeURIComponent(id)}`, {
    method: 'PUT',
    headers: { 'Content-Type': type, ...(token ? bearer(token) : {}) },
    body,
  })
}

const call = (srv: { url: string }, method: string, id: string, token: string | null) =>
  fetch(`${srv.url}/documents/${encodeURIComponent(id)}`, {
    method,
    headers: token ? bearer(token) : {},
  })

async function errorOf(res: Response): Promise<{ status: number; code: string }> {
  const body = await res.json()
  return { status: res.status, code: body.error?.code }
}

async function started(t: TestContext, config: ServerConfigInput = AUTH) {
  return startTestServer(t, config)
}

describe('the periodic orphan sweep', () => {
  test('removes an orphan past the grace by itself and never a file stored before tracking', async (t) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ueditor-sweep-'))
    t.after(() => rm(dataDir, { recursive: true, force: true }))
    const run = (documents: ServerConfigInput['documents']) =>
      startServer({
        env: {},
        config: {
          logLevel: 'silent',
          dataDir,
          documents,
          auth: { mode: 'none' },
          limits: { minFreeBytes: 0 },
          http: { port: 0, host: '127.0.0.1' },
        },
      })
    const uploadTo = async (url: string) => {
      const form = new FormData()
      form.append('upfile', blob(png(2, 2)), 'x.png')
      return (
        await (await fetch(`${url}/ueditor?action=image`, { method: 'POST', body: form })).json()
      ).url as string
    }
    const before = await run({ enabled: false })
    const old = await uploadTo(before.url)
    await before.close()
    const srv = await run({ enabled: true, orphanGrace: '0', sweepInterval: '1s' })
    t.after(() => srv.close())
    const orphan = await uploadTo(srv.url)
    const onDisk = (url: string) =>
      existsSync(join(dataDir, 'uploads', url.slice('/uploads/'.length)))
    await eventually(() => !onDisk(orphan), {
      timeoutMs: 20_000,
      intervalMs: 100,
      what: 'the orphan swept from the disk',
    })
    const listed = await (await fetch(`${srv.url}/ueditor?action=listImage&start=0&size=10`)).json()
    assert.deepEqual(
      listed.list.map((e: { url: string }) => e.url),
      [old],
    )
    assert.equal(onDisk(old), true)
  })
})

describe('the documents API', () => {
  test('is off unless documents.enabled: its path is not found and no route answers it', async (t) => {
    const srv = await started(t, { auth: AUTH.auth })
    assert.equal(srv.ue.documents, null)
    assert.ok(!srv.ue.mounts.prefixes.includes('/documents/'))
    const res = await put(srv, 'post-1', ALICE, '<p>x</p>')
    assert.deepEqual(await errorOf(res), { status: 404, code: 'UE_NOT_FOUND' })
  })

  test('a save answers the cleaned article, the stored files it uses in every URL form and the remote images', async (t) => {
    const srv = await started(t, {
      ...AUTH,
      editor: { imageUrlPrefix: 'https://cdn.example.com' },
    })
    const [a, b, c] = [
      await upload(srv, ALICE, 'a.png'),
      await upload(srv, ALICE, 'b.png'),
      await upload(srv, ALICE, 'c.png'),
    ]
    const article =
      `<p>Hello<img src="${a}" onerror="alert(1)"></p>` +
      `<p><img src="https://cdn.example.com${b}?v=2" alt="b"></p>` +
      '<p><img src="https://img.example.org/remote.jpg"></p>' +
      '<script>alert(1)</script>'
    const res = await put(srv, 'post-1', ALICE, article)
    assert.equal(res.status, 200)
    const saved = await res.json()
    assert.deepEqual(saved, {
      html:
        `<p>Hello<img src="${a}" /></p>` +
        `<p><img src="https://cdn.example.com${b}?v=2" alt="b" /></p>` +
        '<p><img src="https://img.example.org/remote.jpg" /></p>',
      files: [a, b].sort(),
      foreign: ['https://img.example.org/remote.jpg'],
    })
    assert.ok(!saved.files.includes(c))
    const read = await call(srv, 'GET', 'post-1', ALICE)
    assert.equal(read.status, 200)
    const view = await read.json()
    assert.deepEqual(
      { ...view, savedAt: undefined },
      {
        id: 'post-1',
        owner: 'alice',
        files: [a, b].sort(),
        savedAt: undefined,
      },
    )
    assert.ok(Math.abs(Date.parse(view.savedAt) - Date.now()) < 60_000)
  })

  test('an embed stays only when the index holds the stored file it names; one naming no stored file goes', async (t) => {
    const srv = await started(t)
    const stored = await upload(srv, ALICE, 'v.png')
    const missing = '/uploads/video/20261126/1764139201000-v1d2e3.mp4'
    const article =
      `<p>a &lt;b&gt; "c" &amp; 中文\u2028</p><embed src="${missing}" width="420" />` +
      `<p>between</p><embed src="${stored}?x=1&amp;y=&quot;2&quot;" type="video/mp4" />` +
      `<embed src="${missing}" /><p>after</p>`
    const saved = await (await put(srv, 'post-embed', ALICE, article)).json()
    assert.deepEqual(saved, {
      html:
        '<p>a &lt;b&gt; "c" &amp; 中文\u2028</p>' +
        `<p>between</p><embed src="${stored}?x=1&amp;y=&quot;2&quot;" type="video/mp4" />` +
        '<p>after</p>',
      files: [stored],
      foreign: [],
    })
    // JSON with its own saves too: the same answer.
    const json = await (
      await put(srv, 'post-embed', ALICE, JSON.stringify({ html: article }), 'application/json')
    ).json()
    assert.deepEqual(json, saved)
  })

  test('takes JSON {"html"} as well, and refuses other bodies and types with catalogue codes', async (t) => {
    const srv = await started(t, { ...AUTH, documents: { enabled: true, maxBodyBytes: 2048 } })
    const json = await put(
      srv,
      'j',
      ALICE,
      JSON.stringify({ html: '<b>x</b>' }),
      'application/json',
    )
    assert.equal(json.status, 200)
    assert.equal((await json.json()).html, '<b>x</b>')
    assert.deepEqual(await errorOf(await put(srv, 'j', ALICE, '<p>x</p>', 'text/plain')), {
      status: 415,
      code: 'UE_MEDIA_TYPE_UNSUPPORTED',
    })
    assert.deepEqual(
      await errorOf(await put(srv, 'j', ALICE, JSON.stringify({ text: 'x' }), 'application/json')),
      { status: 400, code: 'UE_VALIDATION_FAILED' },
    )
    assert.deepEqual(await errorOf(await put(srv, 'j', ALICE, '{"html":', 'application/json')), {
      status: 400,
      code: 'UE_BODY_INVALID',
    })
    assert.deepEqual(
      await errorOf(await put(srv, 'j', ALICE, new Uint8Array([0x3c, 0x70, 0x3e, 0xff, 0xfe]))),
      { status: 400, code: 'UE_BODY_INVALID' },
    )
    assert.deepEqual(await errorOf(await put(srv, 'j', ALICE, 'x'.repeat(4096))), {
      status: 413,
      code: 'UE_BODY_TOO_LARGE',
    })
    assert.deepEqual(await errorOf(await put(srv, 'x'.repeat(201), ALICE, '<p>x</p>')), {
      status: 400,
      code: 'UE_VALIDATION_FAILED',
    })
    assert.equal((await put(srv, '文'.repeat(200), ALICE, '<p>x</p>')).status, 200)
  })

  test('a user saves, reads and deletes only their own documents; an admin any, keeping the owner', async (t) => {
    const srv = await started(t)
    assert.equal((await put(srv, 'mine', ALICE, '<p>alice</p>')).status, 200)
    for (const [method, res] of [
      ['PUT', await put(srv, 'mine', BOB, '<p>bob</p>')],
      ['GET', await call(srv, 'GET', 'mine', BOB)],
      ['DELETE', await call(srv, 'DELETE', 'mine', BOB)],
    ] as const)
      assert.deepEqual(await errorOf(res), { status: 404, code: 'UE_NOT_FOUND' }, method)
    const missing = await call(srv, 'GET', 'mine', null)
    assert.equal(missing.status, 401)
    assert.match(missing.headers.get('www-authenticate') ?? '', /^Bearer realm="documents"/)
    assert.equal((await put(srv, 'mine', ROOT, '<p>root</p>')).status, 200)
    assert.equal((await (await call(srv, 'GET', 'mine', ALICE)).json()).owner, 'alice')
    assert.equal((await call(srv, 'DELETE', 'mine', ROOT)).status, 200)
    assert.deepEqual(await errorOf(await call(srv, 'GET', 'mine', ALICE)), {
      status: 404,
      code: 'UE_NOT_FOUND',
    })
  })

  test("another user's document is answered exactly as a missing one, and a refused save of it changes nothing", async (t) => {
    const srv = await started(t)
    const a = await upload(srv, ALICE, 'a.png')
    assert.equal((await put(srv, 'hers', ALICE, `<p><img src="${a}"></p>`)).status, 200)
    const before = await (await call(srv, 'GET', 'hers', ALICE)).json()
    const answer = async (res: Response) => ({
      status: res.status,
      type: res.headers.get('content-type'),
      body: await res.text(),
    })
    const missing = await answer(await call(srv, 'GET', 'nobody-has-this', BOB))
    assert.equal(missing.status, 404)
    assert.equal(JSON.parse(missing.body).error.code, 'UE_NOT_FOUND')
    assert.deepEqual(await answer(await call(srv, 'DELETE', 'nobody-has-this', BOB)), missing)
    assert.deepEqual(await answer(await call(srv, 'GET', 'hers', BOB)), missing, 'GET')
    assert.deepEqual(await answer(await call(srv, 'DELETE', 'hers', BOB)), missing, 'DELETE')
    assert.deepEqual(await answer(await put(srv, 'hers', BOB, '<p>bob</p>')), missing, 'PUT')
    assert.deepEqual(await (await call(srv, 'GET', 'hers', ALICE)).json(), before)
  })

  test('browsers on http.corsOrigins may call it: the preflight allows PUT and DELETE', async (t) => {
    const origin = 'https://cms.example'
    const srv = await started(t, { ...AUTH, http: { corsOrigins: [origin] } })
    const res = await fetch(`${srv.url}/documents/p`, {
      method: 'OPTIONS',
      headers: {
        Origin: origin,
        'Access-Control-Request-Method': 'PUT',
        'Access-Control-Request-Headers': 'authorization, content-type',
      },
    })
    assert.equal(res.headers.get('access-control-allow-origin'), origin)
    assert.match(res.headers.get('access-control-allow-methods') ?? '', /PUT/)
    assert.match(res.headers.get('access-control-allow-methods') ?? '', /DELETE/)
    const other = await call(srv, 'POST', 'p', ALICE)
    assert.equal(other.status, 405)
  })

  test("a listing filtered to a document shows only the files it references, within the user's own", async (t) => {
    const srv = await started(t)
    const a = await upload(srv, ALICE, 'a.png')
    const b = await upload(srv, ALICE, 'b.png')
    await upload(srv, ALICE, 'c.png')
    const bobs = await upload(srv, BOB, 'bob.png')
    await put(srv, 'post', ALICE, `<img src="${a}"><img src="${b}"><img src="${bobs}">`)
    const list = async (token: string, query: string) =>
      (await fetch(srv.action('listImage', query), { headers: bearer(token) })).json()
    const mine = await list(ALICE, '&document=post&start=0&size=10')
    assert.equal(mine.total, 2)
    assert.deepEqual(mine.list.map((e: { url: string }) => e.url).sort(), [a, b].sort())
    const all = await list(ALICE, '&start=0&size=10')
    assert.equal(all.total, 3)
    const page = await list(ALICE, '&document=post&start=1&size=1')
    assert.equal(page.list.length, 1)
    assert.equal(page.total, 2)
    const admin = await list(ROOT, '&document=post&start=0&size=10')
    assert.equal(admin.total, 3)
    const none = await list(ALICE, '&document=other&start=0&size=10')
    assert.equal(none.total, 0)
  })
})

/** The standalone binary on a free port with the documents API on, as operators run it. */
async function serverProcess(t: TestContext, env: NodeJS.ProcessEnv = {}) {
  const dir = await tempDir(t, 'ueditor-docs-')
  const child = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env.PATH,
      UEDITOR_DATA_DIR: join(dir, 'data'),
      PORT: '0',
      HOST: '127.0.0.1',
      UEDITOR_DOCUMENTS_ENABLED: 'true',
      // Anonymous on purpose: these tests are about the cleaner, not about who may save.
      UEDITOR_AUTH: 'none',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  t.after(async () => {
    child.kill('SIGTERM')
    await Promise.race([exited, sleep(10_000)])
    child.kill('SIGKILL')
  })
  let stderr = ''
  child.stderr.on('data', (c) => {
    stderr += c
  })
  const url = await listeningUrl(child)
  return { url, stderr: () => stderr }
}

const MiB = 4 * 1024 * 1024
/** `unit` repeated to fill `bytes`. */
const filled = (unit: string, bytes = MiB - 1024) => unit.repeat(Math.floor(bytes / unit.length))

/** The worst shapes of a 4 MiB article for an HTML cleaner and for reading its addresses. */
const HOSTILE_ARTICLES: readonly [name: string, html: string][] = [
  ['deep nesting', filled('<b>')],
  ['flat tiny elements', filled('<b></b>')],
  ['flat void elements', filled('<br>')],
  ['paragraphs closed by the next one', filled('<p>x')],
  ['one huge attribute list', `<p ${filled('a1234567=1 ', MiB - 2048)}>x</p>`],
  ['one long style attribute', `<p style="${filled('color:red;', MiB - 2048)}">x</p>`],
  ['styled spans, as pasted from Word', filled('<span style="font-size:14px;color:#333">t</span>')],
  ['an unclosed tag to the end', `<p>x</p><img src="${filled('a', MiB - 2048)}`],
  ['opening tags never closed', filled('<p><b><i><u>x')],
  ['mismatched end tags', filled('<b>', MiB / 2) + filled('</i>', MiB / 2 - 1024)],
  [
    'mismatched end tags just under the depth limit',
    '<b>'.repeat(250) + filled('</i>', MiB - 2048),
  ],
  [
    'refused iframes between text',
    filled('xxxxxxxxxx<iframe src="https://evil.example/"></iframe>'),
  ],
  ['refused embeds between text', filled('xxxxxxxxxx<embed src="https://evil.example/x.swf">')],
  ['stored-file images', filled('<img src="/uploads/image/20261126/1764139200123-k3j9x2.png">')],
]

describe('the documents API under hostile articles', () => {
  test('every 4 MiB worst shape is saved or refused with UE_DOCUMENT_TOO_COMPLEX, and healthz keeps being answered while it runs', {
    timeout: 300_000,
  }, async (t) => {
    const srv = await serverProcess(t, { UEDITOR_LOG_LEVEL: 'silent' })
    const healthz = async () => {
      const start = performance.now()
      const res = await fetch(`${srv.url}/healthz`)
      await res.arrayBuffer()
      assert.equal(res.status, 200)
      return performance.now() - start
    }
    const figures = (delays: number[]) => {
      const sorted = [...delays].sort((a, b) => a - b)
      const p50 = sorted[Math.floor(sorted.length / 2)] ?? 0
      const max = sorted.at(-1) ?? 0
      return {
        text: `${delays.length} healthz, p50 ${p50.toFixed(1)} ms, max ${max.toFixed(1)} ms`,
      }
    }
    // A first small save starts the workers, as any save after a start does.
    assert.equal((await put(srv, 'warm', null, '<p>x</p>')).status, 200)
    const quiet: number[] = []
    for (let i = 0; i < 40; i++) {
      quiet.push(await healthz())
      await sleep(25)
    }
    t.diagnostic(`with no save running: ${figures(quiet).text}`)
    for (const [name, html] of HOSTILE_ARTICLES) {
      const bytes = new TextEncoder().encode(html)
      const start = performance.now()
      let answered: number | undefined
      const saving = put(srv, 'hostile', null, bytes).then((res) => {
        answered = performance.now() - start
        return res
      })
      const delays: number[] = []
      // healthz answers that came back while the save was still running.
      let during = 0
      while (answered === undefined) {
        delays.push(await healthz())
        if (answered === undefined) during++
        await Promise.race([saving, sleep(25)])
      }
      const res = await saving
      const body = await res.json()
      const { text } = figures(delays)
      t.diagnostic(
        `${name}: ${bytes.length} bytes answered ${res.status}${body.error ? ` ${body.error.code}` : ''} ` +
          `in ${Math.round(answered)} ms; meanwhile ${text}`,
      )
      if (res.status !== 200)
        assert.deepEqual(
          { status: res.status, code: body.error?.code },
          { status: 422, code: 'UE_DOCUMENT_TOO_COMPLEX' },
          name,
        )
      assert.ok(delays.length > 0, name)
      // A save on the event loop would hold every healthz until it answered. The figures above
      // are the measure (the 100 ms target is judged on a quiet machine, not asserted here).
      if (answered > 500)
        assert.ok(during > 0, `${name}: no healthz was answered in ${Math.round(answered)} ms`)
    }
  })

  test('a save through a real server process writes nothing on stderr but JSON log lines', {
    timeout: 60_000,
  }, async (t) => {
    const srv = await serverProcess(t, { UEDITOR_LOG_LEVEL: 'info', UEDITOR_LOG_FORMAT: 'json' })
    const banner = srv.stderr().length
    for (const [id, html] of [
      [
        'a',
        '<p>Hello <img src="/uploads/image/a.png"><script>alert(1)</script><style>p{}</style></p>',
      ],
      ['b', '<p style="color:red">x<iframe src="https://evil.example/"></iframe></p>'],
      ['c', '<p>plain</p>'],
    ])
      assert.equal((await put(srv, id as string, null, html as string)).status, 200)
    // The same save refused: the refusal is a log line too.
    assert.equal((await put(srv, 'd', null, '<b>'.repeat(1000))).status, 422)
    await sleep(200)
    const written = srv.stderr().slice(banner)
    const lines = written.split('\n').filter((line) => line.trim() !== '')
    for (const line of lines)
      assert.doesNotThrow(() => JSON.parse(line), `not a JSON log line: ${line}`)
  })
})
