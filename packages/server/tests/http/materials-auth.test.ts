import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isLoopbackHost } from '../../src/auth/loopback.js'
import { loadConfig } from '../../src/config/load.js'
import type { ServerConfigInput } from '../../src/config/schema.js'
import { createUeditorServer, type UeditorServer } from '../../src/server.js'
import { isUeError } from '../../src/shared/errors.js'
import { setRequestInfo } from '../../src/shared/request-info.js'
import type { Logger } from '../../src/shared/types.js'
import { startServer } from '../../src/standalone/serve.js'
import {
  ADMIN_TOKEN,
  materialsClient,
  READ_TOKEN,
  startMaterialsServer,
} from '../helpers/materials.js'
import { anonymousUnlessSet } from '../helpers/start-server.js'
import { describe, type TestContext, test } from '../helpers/test.js'

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` })

/** The server without a listener, as an embedding app would create it (anonymous unless set). */
async function embedded(t: TestContext, config: ServerConfigInput) {
  const dataDir = await mkdtemp(join(tmpdir(), 'ueditor-auth-'))
  const warnings: string[] = []
  const logger: Logger = {
    debug() {},
    info() {},
    warn: (_o, msg) => warnings.push(msg ?? ''),
    error() {},
  }
  const ue: UeditorServer = await createUeditorServer({
    env: {},
    logger,
    config: {
      ...anonymousUnlessSet(config),
      dataDir,
      materials: { seed: false, ...config.materials },
    },
  })
  t.after(async () => {
    await ue.close()
    await rm(dataDir, { recursive: true, force: true })
  })
  return { ue, warnings }
}

describe('materials reads', () => {
  test('are public without read tokens while the server listens on loopback', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    assert.equal((await c.categories()).status, 200)
    assert.equal((await c.search({})).status, 200)
  })

  test('need a token once read tokens are configured: 401 with WWW-Authenticate: Bearer', async (t) => {
    const { materials: c } = await startMaterialsServer(t, { materials: { tokens: [READ_TOKEN] } })
    for (const res of [await c.categories(), await c.search({})]) {
      assert.equal(res.status, 401)
      assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="materials"')
      assert.equal(res.body.error.code, 'UE_UNAUTHORIZED')
    }
    const ok = await c.request('GET', '/categories', undefined, bearer(READ_TOKEN))
    assert.equal(ok.status, 200)
    const lower = await c.request('GET', '/categories', undefined, {
      Authorization: `bearer ${READ_TOKEN}`,
    })
    assert.equal(lower.status, 200)
  })

  test('refuse a wrong or malformed Bearer credential with invalid_token', async (t) => {
    for (const tokens of [[READ_TOKEN], []]) {
      const { materials: c } = await startMaterialsServer(t, { materials: { tokens } })
      for (const authorization of [
        'Bearer wrong-token-0123456789abcdef',
        `Bearer ${READ_TOKEN}x`,
        `Bearer ${READ_TOKEN.slice(0, -1)}`,
        `Bearer ${READ_TOKEN} extra`,
      ]) {
        const res = await c.request('GET', '/categories', undefined, {
          Authorization: authorization,
        })
        assert.equal(res.status, 401, authorization)
        assert.equal(
          res.headers.get('www-authenticate'),
          'Bearer realm="materials", error="invalid_token"',
        )
      }
    }
  })

  test('treat Authorization in another scheme, or a Bearer with nothing after it, as no credential, neither valid nor invalid', async (t) => {
    const other = [
      `Basic ${Buffer.from(`user:${READ_TOKEN}`).toString('base64')}`,
      READ_TOKEN,
      'Bearer',
      'Bearer ',
    ]
    const { materials: closed } = await startMaterialsServer(t, {
      materials: { tokens: [READ_TOKEN] },
    })
    for (const authorization of other) {
      const res = await closed.request('GET', '/categories', undefined, {
        Authorization: authorization,
      })
      assert.equal(res.status, 401, authorization)
      assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="materials"')
    }
    // Public reads on loopback stay public for a browser that sends HTTP Basic to the site.
    const { materials: open } = await startMaterialsServer(t)
    for (const authorization of other) {
      const res = await open.request('GET', '/categories', undefined, {
        Authorization: authorization,
      })
      assert.equal(res.status, 200, authorization)
    }
  })

  test('are refused on a non-loopback listen address without read tokens, with a warning at start', async (t) => {
    const { ue, warnings } = await embedded(t, { http: { host: '0.0.0.0' } })
    const res = await ue.fetch(new Request('http://203.0.113.5/materials/categories'))
    assert.equal(res.status, 401)
    assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="materials"')
    assert.ok(
      warnings.some((w) => w.includes('materials')),
      warnings.join('\n'),
    )
  })

  test('work with a token on a non-loopback listen address', async (t) => {
    const { ue, warnings } = await embedded(t, {
      http: { host: '0.0.0.0' },
      materials: { tokens: [READ_TOKEN] },
    })
    const res = await ue.fetch(
      new Request('http://203.0.113.5/materials/categories', { headers: bearer(READ_TOKEN) }),
    )
    assert.equal(res.status, 200)
    assert.deepEqual(warnings, [])
  })

  test('are refused without tokens when the adapter reports a peer that is not on this machine', async (t) => {
    const { ue } = await embedded(t, {})
    const request = new Request('http://127.0.0.1/materials/categories')
    setRequestInfo(request, { remoteAddress: '203.0.113.7' })
    assert.equal((await ue.fetch(request)).status, 401)
    const local = new Request('http://127.0.0.1/materials/categories')
    setRequestInfo(local, { remoteAddress: '::ffff:127.0.0.1' })
    assert.equal((await ue.fetch(local)).status, 200)
  })
})

describe('materials admin scope', () => {
  test('a read token reads but gets 403 on admin routes; an admin token does both', async (t) => {
    const srv = await startMaterialsServer(t, { materials: { tokens: [READ_TOKEN] } })
    const reader = materialsClient(`${srv.url}/materials`, READ_TOKEN)
    const admin = materialsClient(`${srv.url}/materials`, ADMIN_TOKEN)

    const refused = await reader.request('POST', '/admin/categories', { name: 'x' })
    assert.equal(refused.status, 403)
    assert.equal(refused.body.error.code, 'UE_FORBIDDEN')
    assert.match(refused.headers.get('www-authenticate') ?? '', /insufficient_scope/)
    assert.equal((await reader.request('GET', '/admin/categories/1')).status, 403)

    const created = await admin.request('POST', '/admin/categories', { name: 'x' })
    assert.equal(created.status, 201)
    assert.equal((await admin.categories()).status, 200)
    assert.equal((await reader.categories()).body.length, 1)
  })

  test('admin routes answer 401 without a token, even while reads are public', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const res = await c.request('POST', '/admin/categories', { name: 'x' })
    assert.equal(res.status, 401)
    assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="materials"')
    assert.deepEqual((await c.categories()).body, [])
  })

  test('admin routes are closed when no admin token is configured', async (t) => {
    const srv = await startMaterialsServer(t, {
      materials: { adminTokens: [], tokens: [READ_TOKEN] },
    })
    const admin = materialsClient(`${srv.url}/materials`, ADMIN_TOKEN)
    const reader = materialsClient(`${srv.url}/materials`, READ_TOKEN)
    assert.equal((await admin.request('POST', '/admin/categories', { name: 'x' })).status, 401)
    assert.equal((await reader.request('POST', '/admin/categories', { name: 'x' })).status, 403)
  })

  test('ue.materials routes on the end of the path, so an app can mount it anywhere', async (t) => {
    const { ue } = await embedded(t, { materials: { adminTokens: [ADMIN_TOKEN] } })
    const create = await ue.materials(
      new Request('http://127.0.0.1/cms/api/designer/admin/categories', {
        method: 'POST',
        headers: { ...bearer(ADMIN_TOKEN), 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: '标题' }),
      }),
    )
    assert.equal(create.status, 201)
    const list = await ue.materials(new Request('http://127.0.0.1/cms/api/designer/categories'))
    assert.equal(list.status, 200)
    assert.equal((await list.json())[0].name, '标题')
  })
})

describe('materials auth configuration', () => {
  test('the standalone server takes its read and admin tokens from UEDITOR_MATERIALS_TOKENS and UEDITOR_MATERIALS_ADMIN_TOKENS', async (t) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ueditor-auth-env-'))
    t.after(() => rm(dataDir, { recursive: true, force: true }))
    const otherReader = `${READ_TOKEN}-second`
    const srv = await startServer({
      env: {
        UEDITOR_MATERIALS_TOKENS: `${READ_TOKEN}, ${otherReader}`,
        UEDITOR_MATERIALS_ADMIN_TOKENS: ADMIN_TOKEN,
        UEDITOR_MATERIALS_SEED: 'false',
      },
      config: { logLevel: 'silent', dataDir, http: { port: 0, host: '127.0.0.1' } },
    })
    t.after(() => srv.close())
    const base = `${srv.url}/materials`

    // Loopback, but read tokens are configured: no public reads.
    assert.equal((await materialsClient(base).categories()).status, 401)
    const created = await materialsClient(base, ADMIN_TOKEN).request('POST', '/admin/categories', {
      name: '环境 Env',
    })
    assert.equal(created.status, 201)
    for (const token of [READ_TOKEN, otherReader]) {
      const reader = materialsClient(base, token)
      assert.deepEqual(
        ((await reader.categories()).body as { name: string }[]).map((c) => c.name),
        ['环境 Env'],
        token,
      )
      assert.equal((await reader.request('POST', '/admin/categories', { name: 'x' })).status, 403)
    }
  })

  test('reads comma-separated tokens from UEDITOR_MATERIALS_TOKENS and UEDITOR_MATERIALS_ADMIN_TOKENS', () => {
    const config = loadConfig({
      env: {
        UEDITOR_MATERIALS_TOKENS: `${READ_TOKEN}, ${READ_TOKEN}2`,
        UEDITOR_MATERIALS_ADMIN_TOKENS: ADMIN_TOKEN,
        UEDITOR_MATERIALS_SEED: 'false',
        UEDITOR_MATERIALS_PATH: '/designer',
      },
    })
    assert.deepEqual(config.materials.tokens, [READ_TOKEN, `${READ_TOKEN}2`])
    assert.deepEqual(config.materials.adminTokens, [ADMIN_TOKEN])
    assert.equal(config.materials.seed, false)
    assert.equal(config.routes.materials, '/designer')
  })

  test('refuses tokens shorter than 16 characters or with characters a header cannot carry', () => {
    assert.throws(
      () =>
        loadConfig({
          env: {},
          overrides: { materials: { tokens: ['short'], adminTokens: ['has space 0123456789'] } },
        }),
      (e) =>
        isUeError(e) &&
        e.code === 'UE_CONFIG_INVALID' &&
        /materials\.tokens\.0/.test(e.detail ?? '') &&
        /materials\.adminTokens\.0/.test(e.detail ?? '') &&
        !(e.detail ?? '').includes('has space'),
    )
  })

  test('knows which listen addresses are loopback', () => {
    for (const host of ['127.0.0.1', '127.8.9.10', '::1', '[::1]', 'localhost', '::ffff:127.0.0.1'])
      assert.equal(isLoopbackHost(host), true, host)
    for (const host of [
      '0.0.0.0',
      '::',
      '10.0.0.1',
      '128.0.0.1',
      '::ffff:10.0.0.1',
      'example.com',
      '127.0.0.1.nip.io',
    ])
      assert.equal(isLoopbackHost(host), false, host)
  })
})
