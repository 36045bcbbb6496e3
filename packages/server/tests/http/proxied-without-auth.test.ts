import assert from 'node:assert/strict'
import { request } from 'node:http'
import { test } from 'node:test'
import type { ServerConfigInput } from '../../src/config/schema.js'
import { ALICE, TOKENS } from '../helpers/auth.js'
import { png } from '../helpers/fixtures.js'
import { jsonLog } from '../helpers/json-log.js'
import { multipartBody } from '../helpers/multipart.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'

/** A request with headers fetch will not let us set (`Host`); the answer's status and JSON. */
function send(
  url: string,
  o: { method?: string; headers?: Record<string, string>; body?: Buffer } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: o.method ?? 'GET', headers: o.headers ?? {} }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c) => {
        text += c
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }))
    })
    req.on('error', reject)
    req.end(o.body)
  })
}

function uploadThrough(srv: TestServer, headers: Record<string, string>) {
  const { body, contentType } = multipartBody([
    { name: 'upfile', filename: 'a.png', value: png(4, 4) },
  ])
  return send(srv.action('image'), {
    method: 'POST',
    headers: { 'Content-Type': contentType, ...headers },
    body,
  })
}

const PROXY_SIGNS: [string, Record<string, string>][] = [
  ['X-Forwarded-For', { 'X-Forwarded-For': '203.0.113.7' }],
  ['Forwarded', { Forwarded: 'for=203.0.113.7;proto=https' }],
  ['X-Real-IP', { 'X-Real-IP': '203.0.113.7' }],
  ['a public Host', { Host: 'www.example.com' }],
  ['an upstream name as Host', { Host: 'ueditor_backend' }],
]

for (const [sign, headers] of PROXY_SIGNS) {
  test(`without auth configured, an upload that arrives with ${sign} is refused readably and stores nothing`, async (t) => {
    const srv = await startTestServer(t, { limits: { minFreeBytes: 0 } })
    const refused = await uploadThrough(srv, headers)
    assert.equal(refused.status, 200)
    assert.equal(refused.body.code, 'UE_PROXY_WITHOUT_AUTH')
    assert.equal(refused.body.state, '服务器未配置身份验证，不接受经代理转发的请求')
    assert.deepEqual(await srv.storedFiles(), [])
  })
}

test('without auth configured, a request straight to loopback works as on a first run', async (t) => {
  const srv = await startTestServer(t, { limits: { minFreeBytes: 0 } })
  for (const host of [new URL(srv.url).host, 'localhost:8080', '[::1]:8080']) {
    const stored = await uploadThrough(srv, { Host: host })
    assert.equal(stored.body.state, 'SUCCESS', `${host}: ${JSON.stringify(stored.body)}`)
  }
  const listed = await send(srv.action('listImage', '&start=0&size=20'))
  assert.equal((listed.body.list as unknown[]).length, 3)
})

test('without auth configured, config still answers through a proxy, listings and materials do not', async (t) => {
  const srv = await startTestServer(t)
  const proxied = { 'X-Forwarded-For': '203.0.113.7', Host: 'www.example.com' }
  const config = await send(srv.action('config'), { headers: proxied })
  assert.equal(config.body.imageActionName, 'image')
  const list = await send(srv.action('listImage', '&start=0&size=20'), { headers: proxied })
  assert.equal(list.body.code, 'UE_PROXY_WITHOUT_AUTH')
  const materials = await send(`${srv.url}/materials/categories`, { headers: proxied })
  assert.equal(materials.status, 403)
  assert.equal((materials.body.error as { code: string }).code, 'UE_PROXY_WITHOUT_AUTH')
  // Straight on loopback the materials stay readable, as before.
  assert.equal((await send(`${srv.url}/materials/categories`)).status, 200)
})

test('with http.errorStatus http the refusal is a 403', async (t) => {
  const srv = await startTestServer(t, { http: { errorStatus: 'http' } })
  const refused = await uploadThrough(srv, { 'X-Forwarded-For': '203.0.113.7' })
  assert.equal(refused.status, 403)
  assert.equal(refused.body.code, 'UE_PROXY_WITHOUT_AUTH')
})

const settings: [string, ServerConfigInput, Record<string, string>][] = [
  ['UEDITOR_AUTH=none', { auth: { mode: 'none' } }, {}],
  ['static tokens', { auth: { tokens: TOKENS } }, { Authorization: `Bearer ${ALICE}` }],
]
for (const [name, config, credential] of settings) {
  test(`with ${name}, an upload through a proxy is stored`, async (t) => {
    const srv = await startTestServer(t, { ...config, limits: { minFreeBytes: 0 } })
    const stored = await uploadThrough(srv, {
      'X-Forwarded-For': '203.0.113.7',
      Host: 'www.example.com',
      ...credential,
    })
    assert.equal(stored.body.state, 'SUCCESS', JSON.stringify(stored.body))
  })
}

test('the first refusal through a proxy is logged at warn with the fix, later ones are not', async (t) => {
  const { records: lines, logger } = jsonLog('warn')
  const srv = await startTestServer(t, {}, { logger })
  for (let i = 0; i < 3; i++)
    await send(srv.action('listImage', '&start=0&size=20'), {
      headers: { 'X-Real-IP': '203.0.113.7' },
    })
  const warnings = lines.filter((l) => String(l.msg).includes('UE_PROXY_WITHOUT_AUTH'))
  assert.equal(warnings.length, 1, JSON.stringify(lines))
  assert.equal(warnings[0]?.sign, 'x-real-ip')
  assert.match(String(warnings[0]?.msg), /UEDITOR_AUTH_TOKENS/)
  assert.match(String(warnings[0]?.msg), /UEDITOR_AUTH=none/)
})
