import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createUeditorServer } from '../../src/server.js'
import { recordingLogger } from '../helpers/auth.js'
import { startTestServer } from '../helpers/start-server.js'
import { test } from '../helpers/test.js'

const READ_ONLY = (formula: string) => [
  '/healthz',
  '/readyz',
  '/metrics',
  `${formula}.svg?x`,
  '/examples/designer.html',
  '/index.html',
]

test('a method a read-only route does not answer is refused with 405 and Allow on every one of them, the static site included', async (t) => {
  const site = await mkdtemp(join(tmpdir(), 'ueditor-site-'))
  t.after(() => rm(site, { recursive: true, force: true }))
  await writeFile(join(site, 'index.html'), '<p>hi</p>')
  const srv = await startTestServer(t, { site: { dir: site } })
  for (const path of READ_ONLY(srv.ue.config.formula.path)) {
    assert.equal((await fetch(`${srv.url}${path}`)).status, 200, path)
    const res = await fetch(`${srv.url}${path}`, { method: 'POST', body: 'x' })
    assert.equal(res.status, 405, path)
    assert.equal(res.headers.get('allow'), 'GET, HEAD', path)
    assert.equal((await res.json()).error.code, 'UE_METHOD_NOT_ALLOWED', path)
  }
  const bare = await startTestServer(t)
  const missing = await fetch(`${bare.url}/index.html`, { method: 'POST', body: 'x' })
  assert.equal(
    missing.status,
    404,
    'without a site, a path no route answers is a 404 whatever the method',
  )
  await missing.arrayBuffer()
})

test('a refusal of the materials API is logged once at debug with its code and no stack, and counted once', async (t) => {
  const log = recordingLogger()
  const srv = await startTestServer(t, { logLevel: 'debug' }, { logger: log })
  const path = `${srv.url}${srv.ue.config.routes.materials}/admin/categories`
  const res = await fetch(path, { method: 'POST', body: '{}' })
  assert.equal(res.status, 401)
  assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer realm="materials"/)
  await res.arrayBuffer()
  const refusals = log.lines.map((l) => JSON.parse(l)).filter((l) => l.code === 'UE_UNAUTHORIZED')
  assert.equal(refusals.length, 1, log.lines.join('\n'))
  assert.equal(refusals[0].level, 'debug')
  assert.equal(refusals[0].msg, 'materials request refused')
  assert.ok(!('err' in refusals[0]) && !('stack' in refusals[0]))
  const metrics = await (await fetch(`${srv.url}/metrics`)).text()
  assert.match(metrics, /^ueditor_refusals_total\{area="materials",code="UE_UNAUTHORIZED"\} 1$/m)
})

test('while stopping, every route but the editor and liveness refuses before its handler, and the refusal is logged at info', async (t) => {
  const log = recordingLogger()
  const srv = await startTestServer(t, {}, { logger: log })
  srv.ue.stopAccepting()
  const { routes } = srv.ue.config
  for (const path of [
    '/readyz',
    '/metrics',
    `${routes.files}/a.png`,
    `${routes.materials}/categories`,
    '/x',
  ]) {
    const res = await fetch(`${srv.url}${path}`)
    assert.equal(res.status, 503, path)
    assert.equal(res.headers.get('retry-after'), '5', path)
    assert.equal((await res.json()).error.code, 'UE_SHUTTING_DOWN', path)
  }
  assert.equal((await fetch(`${srv.url}/healthz`)).status, 200)
  const lines = log.lines.map((l) => JSON.parse(l)).filter((l) => l.code === 'UE_SHUTTING_DOWN')
  assert.equal(lines.length, 5)
  assert.ok(lines.every((l) => l.level === 'info'))
})

test('a start that fails after its index is open closes it again: no SQLite connection is left, and the next start on the same folder serves', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'ueditor-failed-start-'))
  t.after(() => rm(dataDir, { recursive: true, force: true }))
  await mkdir(join(dataDir, 'marks'))
  // The watermark is read after the index is opened and migrated.
  const config = {
    dataDir,
    logLevel: 'silent' as const,
    images: { watermark: { file: join(dataDir, 'marks', 'missing.png') } },
  }
  for (let i = 0; i < 2; i++)
    await assert.rejects(createUeditorServer({ env: {}, config }), { code: 'UE_CONFIG_INVALID' })
  const ue = await createUeditorServer({ env: {}, config: { dataDir, logLevel: 'silent' } })
  const index = ue.config.index.driver === 'sqlite' ? ue.config.index.file : ''
  const res = await ue.fetch(
    new Request(`http://localhost${ue.config.routes.editor}?action=config`),
  )
  assert.equal(typeof (await res.json()).imageActionName, 'string')
  await ue.close()
  assert.ok(existsSync(index), 'the failed starts got as far as creating the index')
  // SQLite removes the -wal file when the last connection to the database closes.
  assert.equal(existsSync(`${index}-wal`), false, 'a connection of a failed start is still open')
})
