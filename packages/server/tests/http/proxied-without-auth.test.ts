import assert from 'node:assert/strict'
import { request } from 'node:http'
import { connect } from 'node:net'
import type { ServerConfigInput } from '../../src/config/schema.js'
import { createUeditorServer } from '../../src/index.js'
import { ALICE, TOKENS } from '../helpers/auth.js'
import { png } from '../helpers/fixtures.js'
import { jsonLog } from '../helpers/json-log.js'
import { multipartBody } from '../helpers/multipart.js'
import {
  startTestServer,
  startUnconfiguredServer,
  type TestServer,
} from '../helpers/start-server.js'
import { tempDir } from '../helpers/temp-dir.js'
import { test } from '../helpers/test.js'

// A server with no auth setting refuses anonymous use wherever the request seems to come from:
// a proxy in front need not show itself, and a client can dress as this machine.

interface Answer {
  status: number
  body: Record<string, unknown>
}

/** A request with headers fetch will not let us set (`Host`); the answer's status and JSON. */
function send(
  url: string,
  o: { method?: string; headers?: Record<string, string>; body?: Buffer } = {},
): Promise<Answer> {
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

/** Bytes on a socket as written, for request lines and headers no client library sends. */
function sendRaw(srv: TestServer, head: string, body: Buffer): Promise<Answer> {
  const { port } = new URL(srv.url)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1')
    const chunks: Buffer[] = []
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')))
    socket.on('data', (c) => chunks.push(c))
    socket.on('error', reject)
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1])
      const json = text.slice(text.indexOf('\r\n\r\n') + 4)
      try {
        resolve({ status, body: JSON.parse(json) })
      } catch {
        reject(new Error(`not a JSON answer:\n${text}`))
      }
    })
    socket.write(head)
    socket.end(body)
  })
}

function imageForm() {
  return multipartBody([{ name: 'upfile', filename: 'a.png', value: png(4, 4) }])
}

function uploadWith(srv: TestServer, headers: Record<string, string>) {
  const { body, contentType } = imageForm()
  return send(srv.action('image'), {
    method: 'POST',
    headers: { 'Content-Type': contentType, ...headers },
    body,
  })
}

/** An upload whose request line and headers are `line` and `headers`, with Connection: close. */
function rawUpload(srv: TestServer, line: string, headers: string[]) {
  const { body, contentType } = imageForm()
  const head = [
    line,
    ...headers,
    `Content-Type: ${contentType}`,
    `Content-Length: ${body.length}`,
    'Connection: close',
    '',
    '',
  ].join('\r\n')
  return sendRaw(srv, head, body)
}

const REFUSED_STATE =
  '服务器未配置身份验证：请设置 UEDITOR_AUTH_TOKENS 或 JWT 密钥，或以 UEDITOR_AUTH=none 允许匿名使用'

/** Every way an upload may look as if it came from this machine or through a proxy. */
const DISGUISES: [string, (srv: TestServer) => Promise<Answer>][] = [
  ['the server’s own Host', (srv) => uploadWith(srv, { Host: new URL(srv.url).host })],
  ...['127.0.0.1', 'localhost', '[::1]', '127.1', '0x7f.1', '2130706433', 'localhost.'].map(
    (host): [string, (srv: TestServer) => Promise<Answer>] => [
      `Host: ${host}`,
      (srv) => uploadWith(srv, { Host: host }),
    ],
  ),
  ['X-Forwarded-For', (srv) => uploadWith(srv, { 'X-Forwarded-For': '203.0.113.7' })],
  ['Forwarded', (srv) => uploadWith(srv, { Forwarded: 'for=203.0.113.7;proto=https' })],
  ['X-Real-IP', (srv) => uploadWith(srv, { 'X-Real-IP': '203.0.113.7' })],
  ['a public Host', (srv) => uploadWith(srv, { Host: 'www.example.com' })],
  ['an upstream name as Host', (srv) => uploadWith(srv, { Host: 'ueditor_backend' })],
  [
    'HTTP/1.0 and no Host',
    (srv) => rawUpload(srv, `POST ${srv.ue.config.routes.editor}?action=image HTTP/1.0`, []),
  ],
  [
    'an absolute-form target naming 127.0.0.1',
    (srv) =>
      rawUpload(srv, `POST http://127.0.0.1${srv.ue.config.routes.editor}?action=image HTTP/1.1`, [
        'Host: www.example.com',
      ]),
  ],
]

for (const [disguise, upload] of DISGUISES) {
  test(`without auth configured, an upload with ${disguise} is refused readably and stores nothing`, async (t) => {
    const srv = await startUnconfiguredServer(t, { limits: { minFreeBytes: 0 } })
    const refused = await upload(srv)
    assert.equal(refused.status, 200)
    assert.equal(refused.body.code, 'UE_AUTH_NOT_CONFIGURED', JSON.stringify(refused.body))
    assert.equal(refused.body.state, REFUSED_STATE)
    assert.deepEqual(await srv.storedFiles(), [])
    assert.deepEqual(await srv.tempFiles(), [])
  })
}

test('without auth configured, config answers and stored files are served; listings, captures, materials, documents and tus creation are refused', async (t) => {
  // A file stored earlier, while the data folder's server let anyone in on purpose.
  const open = await startTestServer(t, { limits: { minFreeBytes: 0 } })
  const stored = await uploadWith(open, {})
  assert.equal(stored.body.state, 'SUCCESS')
  const dir = await tempDir(t, 'ueditor-unconfigured-')
  const srv = await startUnconfiguredServer(t, {
    limits: { minFreeBytes: 0 },
    index: { driver: 'sqlite', file: `${open.dataDir}/ueditor.db` },
    storage: { driver: 'local', root: open.storageRoot() },
    uploads: { tempDir: dir },
    documents: { enabled: true },
    tus: { enabled: true },
  })

  const config = await send(srv.action('config'))
  assert.equal(config.body.imageActionName, 'image')
  const file = await fetch(`${srv.url}${stored.body.url}`)
  assert.equal(file.status, 200)
  assert.equal(file.headers.get('content-type'), 'image/png')

  const list = await send(srv.action('listImage', '&start=0&size=20'))
  assert.equal(list.body.code, 'UE_AUTH_NOT_CONFIGURED')
  const capture = await send(srv.action('catch'), {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: Buffer.from('source%5B%5D=http%3A%2F%2F203.0.113.9%2Fa.png'),
  })
  assert.equal((capture.body.list as { code: string }[])[0]?.code, 'UE_AUTH_NOT_CONFIGURED')
  const materials = await send(`${srv.url}/materials/categories`)
  assert.equal(materials.status, 403)
  assert.equal((materials.body.error as { code: string }).code, 'UE_AUTH_NOT_CONFIGURED')
  const document = await send(`${srv.url}/documents/first-article`, {
    method: 'PUT',
    headers: { 'Content-Type': 'text/html' },
    body: Buffer.from('<p>hello</p>'),
  })
  assert.equal(document.status, 403)
  assert.equal((document.body.error as { code: string }).code, 'UE_AUTH_NOT_CONFIGURED')
  const tus = await send(`${srv.url}${srv.ue.config.routes.tus}`, {
    method: 'POST',
    headers: { 'Tus-Resumable': '1.0.0', 'Upload-Length': '10' },
  })
  assert.equal(tus.status, 403)
  assert.equal((tus.body.error as { code: string }).code, 'UE_AUTH_NOT_CONFIGURED')

  // Nothing new anywhere: the one file from before, no spool, no document.
  assert.deepEqual(await srv.storedFiles(), await open.storedFiles())
  assert.equal((await srv.storedFiles()).length, 1)
  assert.deepEqual(await srv.tempFiles(), [])
  assert.equal((await fetch(`${open.url}/documents/first-article`)).status, 404)
})

test('with http.errorStatus http the refusal is a 403 that names the code', async (t) => {
  const srv = await startUnconfiguredServer(t, { http: { errorStatus: 'http' } })
  const refused = await uploadWith(srv, {})
  assert.equal(refused.status, 403)
  assert.equal(refused.body.code, 'UE_AUTH_NOT_CONFIGURED')
})

const settings: [string, ServerConfigInput, Record<string, string>][] = [
  ['UEDITOR_AUTH=none', { auth: { mode: 'none' } }, {}],
  ['static tokens', { auth: { tokens: TOKENS } }, { Authorization: `Bearer ${ALICE}` }],
]
for (const [name, config, credential] of settings) {
  test(`with ${name}, an upload straight or through a proxy is stored`, async (t) => {
    const srv = await startUnconfiguredServer(t, { ...config, limits: { minFreeBytes: 0 } })
    const straight = await uploadWith(srv, credential)
    assert.equal(straight.body.state, 'SUCCESS', JSON.stringify(straight.body))
    const proxied = await uploadWith(srv, {
      'X-Forwarded-For': '203.0.113.7',
      Host: 'www.example.com',
      ...credential,
    })
    assert.equal(proxied.body.state, 'SUCCESS', JSON.stringify(proxied.body))
  })
}

test('the first refusal without auth configured is logged at warn with the fix, later ones are not', async (t) => {
  const { records: lines, logger } = jsonLog('warn')
  const srv = await startUnconfiguredServer(t, {}, { logger })
  for (let i = 0; i < 3; i++) await send(srv.action('listImage', '&start=0&size=20'))
  const warnings = lines.filter((l) => String(l.msg).includes('UE_AUTH_NOT_CONFIGURED'))
  assert.equal(warnings.length, 1, JSON.stringify(lines))
  assert.match(String(warnings[0]?.msg), /UEDITOR_AUTH_TOKENS/)
  assert.match(String(warnings[0]?.msg), /UEDITOR_AUTH=none/)
})

test('mounted in an app without auth settings, the server refuses uploads until auth.mode none says anyone may', async (t) => {
  const dir = await tempDir(t, 'ueditor-mounted-')
  const upload = async (config: ServerConfigInput, name: string) => {
    const ue = await createUeditorServer({
      env: {},
      config: {
        logLevel: 'silent',
        dataDir: `${dir}/${name}`,
        limits: { minFreeBytes: 0 },
        ...config,
      },
    })
    t.after(() => ue.close())
    const { body, contentType } = imageForm()
    const res = await ue.fetch(
      new Request('http://127.0.0.1/ueditor?action=image', {
        method: 'POST',
        headers: { 'Content-Type': contentType },
        body: new Uint8Array(body),
      }),
    )
    const answer = await res.json()
    return answer.code ?? answer.state
  }
  assert.equal(await upload({}, 'unset'), 'UE_AUTH_NOT_CONFIGURED')
  assert.equal(await upload({ auth: { mode: 'none' } }, 'none'), 'SUCCESS')
})
