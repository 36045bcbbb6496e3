import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, type TestContext, test } from 'node:test'
import type { ServerConfigInput } from '../../src/config/schema.js'
import { startServer } from '../../src/standalone/serve.js'
import { ALICE, BOB, ROOT, TOKENS } from '../helpers/auth.js'
import { blob, png } from '../helpers/fixtures.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'

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

function put(srv: TestServer, id: string, token: string | null, body: string, type = 'text/html') {
  return fetch(`${srv.url}/documents/${encodeURIComponent(id)}`, {
    method: 'PUT',
    headers: { 'Content-Type': type, ...(token ? bearer(token) : {}) },
    body,
  })
}

const call = (srv: TestServer, method: string, id: string, token: string | null) =>
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
    while (onDisk(orphan)) await new Promise((resolve) => setTimeout(resolve, 100))
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
      assert.deepEqual(await errorOf(res), { status: 403, code: 'UE_FORBIDDEN' }, method)
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
