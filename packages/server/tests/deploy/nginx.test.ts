import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { createServer as createHttpServer, request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import * as tus from 'tus-js-client'
import type { ServerConfigInput } from '../../src/config/schema.js'
import { isMounted } from '../../src/http/mounts.js'
import { hsToken, SECRET } from '../helpers/auth.js'
import { documentedBlock } from '../helpers/documented.js'
import { eventually } from '../helpers/eventually.js'
import { blob, MP4, png } from '../helpers/fixtures.js'
import { jsonLog } from '../helpers/json-log.js'
import {
  documentedSite,
  nginxSize,
  siteLocation,
  startDocumentedSite,
  startNginx as startNginxWith,
} from '../helpers/nginx.js'
import { freePort } from '../helpers/ports.js'
import { startS3rver } from '../helpers/s3rver.js'
import { untilReady } from '../helpers/server-process.js'
import { startTestServer } from '../helpers/start-server.js'
import { tempDir } from '../helpers/temp-dir.js'
import { type TestContext, test } from '../helpers/test.js'
import {
  patchBrokenOff,
  patchRest,
  sha256Of,
  tusFetch,
  tusMetadata,
  writeVideo,
} from '../helpers/tus.js'

// Tests run from packages/server/dist/tests/deploy; the guide is at the repository's root.
const DEPLOY_MD = join(
  fileURLToPath(new URL('../../../../../', import.meta.url)),
  'docs',
  'deploy.md',
)

/** The value docs/deploy.md gives a setting (`NAME=value`), so the test runs what it says. */
function documentedSetting(name: string): string {
  const m = new RegExp(`\\b${name}=([^\\s<]+)`).exec(readFileSync(DEPLOY_MD, 'utf8'))
  assert.ok(m, `docs/deploy.md sets ${name}`)
  return m[1] as string
}

const AUDIENCE = documentedSetting('UEDITOR_AUTH_JWT_AUDIENCE')
const METRICS_TOKEN = 'metrics-token-0123456789abcdef'

/** The server settings of the recipe: JWTs from the site's app, nginx trusted on loopback. */
function recipe(extra: ServerConfigInput = {}): ServerConfigInput {
  return {
    ...extra,
    auth: { jwt: { secret: SECRET, audience: AUDIENCE }, ...extra.auth },
    metrics: { token: METRICS_TOKEN },
    http: { trustProxy: documentedSetting('UEDITOR_TRUST_PROXY').split(','), ...extra.http },
  }
}

/** The editor's credential, as the site's app mints it for a signed-in user. */
async function bearer(sub = 'alice'): Promise<Record<string, string>> {
  return { Authorization: `Bearer ${await hsToken({ sub, aud: AUDIENCE })}` }
}

/** A minimal MP4 (an ftyp box) padded to `size` bytes. */
function mp4(size: number): Buffer {
  const head = Buffer.concat([
    Buffer.from([0, 0, 0, 0x18]),
    Buffer.from('ftypisom', 'ascii'),
    Buffer.from([0, 0, 2, 0]),
    Buffer.from('isomiso2', 'ascii'),
  ])
  return Buffer.concat([head, Buffer.alloc(size - head.length, 7)])
}

/**
 * Debian's nginx with the documented site in front of one node (or two), as written but for
 * the addresses and the site root. Locally a missing nginx skips with the reason; with CI=true
 * it is a failure.
 */
async function startNginx(t: TestContext, upstreamPorts: number | number[], root: string) {
  const nginx = await startDocumentedSite(t, {
    upstreams: typeof upstreamPorts === 'number' ? [upstreamPorts] : upstreamPorts,
    root,
  })
  if (nginx) errorLogs.set(nginx.url, nginx.errors)
  return nginx?.url
}

/**
 * The smallest site docs/deploy.md names (`location / { proxy_pass http://127.0.0.1:8080; }`),
 * in a server of its own on a loopback port, passing to `upstreamPort`.
 */
async function startBareNginx(t: TestContext, upstreamPort: number) {
  const m = /`(location \/ \{ proxy_pass http:\/\/127\.0\.0\.1:8080; \})`/.exec(
    readFileSync(DEPLOY_MD, 'utf8'),
  )
  assert.ok(m, 'docs/deploy.md names the bare proxy_pass site')
  const location = (m[1] as string).replace('127.0.0.1:8080', `127.0.0.1:${upstreamPort}`)
  const nginx = await startNginxWith(
    t,
    ({ port }) => `server {\n    listen 127.0.0.1:${port};\n    ${location}\n}\n`,
  )
  return nginx?.url
}

const errorLogs = new Map<string, () => Promise<string>>()

/** nginx's error log, for a failure message. */
async function nginxErrors(url: string): Promise<string> {
  return (await errorLogs.get(url)?.()) ?? ''
}

async function siteRoot(t: TestContext): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'ueditor-www-'))
  await chmod(root, 0o755)
  t.after(() => rm(root, { recursive: true, force: true }))
  await mkdir(join(root, 'ueditor-plus'))
  await writeFile(join(root, 'index.html'), '<!doctype html><title>site</title>')
  await writeFile(join(root, 'ueditor-plus', 'ueditor.config.js'), 'window.UEDITOR_CONFIG = {}')
  return root
}

test('behind the documented nginx site: the page, an upload, its listing and byte ranges', async (t) => {
  const root = await siteRoot(t)
  const srv = await startTestServer(t, recipe())
  const url = await startNginx(t, Number(new URL(srv.url).port), root)
  if (!url) return
  assert.equal(await (await fetch(`${url}/`)).text(), '<!doctype html><title>site</title>')
  const editorFile = await fetch(`${url}/ueditor-plus/ueditor.config.js`)
  assert.equal(
    await editorFile.text(),
    'window.UEDITOR_CONFIG = {}',
    'served by nginx, not proxied',
  )
  assert.deepEqual(await (await fetch(`${url}/healthz`)).json(), { status: 'ok' })
  assert.equal(
    (await (await fetch(`${url}/ueditor?action=config`)).json()).imageActionName,
    'image',
  )

  const form = new FormData()
  form.append('upfile', blob(png(32, 32), 'image/png'), 'pasted.png')
  const headers = await bearer()
  const stored = await (
    await fetch(`${url}/ueditor?action=image`, { method: 'POST', body: form, headers })
  ).json()
  assert.equal(stored.state, 'SUCCESS')
  const listed = await (
    await fetch(`${url}/ueditor?action=listImage&start=0&size=20`, { headers })
  ).json()
  assert.equal(listed.list[0].url, stored.url)

  const whole = await fetch(`${url}${stored.url}`)
  assert.equal(whole.status, 200)
  assert.equal(whole.headers.get('x-content-type-options'), 'nosniff')
  const bytes = Buffer.from(await whole.arrayBuffer())
  const part = await fetch(`${url}${stored.url}`, { headers: { Range: 'bytes=8-15' } })
  assert.equal(part.status, 206)
  assert.equal(part.headers.get('content-range'), `bytes 8-15/${bytes.length}`)
  assert.deepEqual(Buffer.from(await part.arrayBuffer()), bytes.subarray(8, 16))
})

test('behind the documented nginx site: a 12 MB video passes, and one over the editor limit is refused by the server', async (t) => {
  const root = await siteRoot(t)
  const srv = await startTestServer(t, recipe({ editor: { videoMaxSize: 16 * 1024 * 1024 } }))
  const url = await startNginx(t, Number(new URL(srv.url).port), root)
  if (!url) return
  const headers = await bearer()
  const big = mp4(12 * 1024 * 1024)
  const form = new FormData()
  form.append('file', blob(big, 'video/mp4'), 'clip.mp4')
  const stored = await (
    await fetch(`${url}/ueditor?action=video`, { method: 'POST', body: form, headers })
  ).json()
  assert.equal(stored.state, 'SUCCESS', JSON.stringify(stored))
  assert.equal(stored.size, big.length)
  const tail = await fetch(`${url}${stored.url}`, { headers: { Range: 'bytes=-4' } })
  assert.equal(tail.status, 206)
  assert.equal(
    tail.headers.get('content-range'),
    `bytes ${big.length - 4}-${big.length - 1}/${big.length}`,
  )

  const tooBig = new FormData()
  tooBig.append('file', blob(mp4(20 * 1024 * 1024), 'video/mp4'), 'long.mp4')
  const refused = await fetch(`${url}/ueditor?action=video`, {
    method: 'POST',
    body: tooBig,
    headers,
  })
  assert.equal(refused.status, 200)
  assert.equal((await refused.json()).code, 'UE_FILE_TOO_LARGE')
  assert.deepEqual(await srv.storedFiles(), [stored.url.replace(/^\/uploads\//, '')])
})

const portOf = (srv: { url: string }) => Number(new URL(srv.url).port)

async function uploadPng(url: string, headers: Record<string, string>): Promise<string> {
  const form = new FormData()
  form.append('upfile', blob(png(16, 16), 'image/png'), 'a.png')
  let res: Response
  try {
    res = await fetch(`${url}/ueditor?action=image`, { method: 'POST', body: form, headers })
  } catch (e) {
    return `network error: ${(e as Error & { cause?: Error }).cause?.message ?? e}`
  }
  const text = await res.text()
  try {
    const answer = JSON.parse(text)
    return answer.state === 'SUCCESS' ? 'SUCCESS' : (answer.code ?? text)
  } catch {
    return `HTTP ${res.status}: ${text.slice(0, 80)}`
  }
}

/** The environment file of docs/deploy.md (`/etc/ueditor/ueditor.env`), its auth lines aside. */
function documentedEnvFile(): Record<string, string> {
  const m = /```sh\n# \/etc\/ueditor\/ueditor\.env:[^\n]*\n([\s\S]*?)```/.exec(
    readFileSync(DEPLOY_MD, 'utf8'),
  )
  assert.ok(m, 'docs/deploy.md has the environment file')
  const env: Record<string, string> = {}
  for (const line of (m[1] as string).split('\n')) {
    const setting = /^([A-Z_]+)=(.*)$/.exec(line)
    if (setting) env[setting[1] as string] = setting[2] as string
  }
  assert.ok(!Object.keys(env).some((name) => name.startsWith('UEDITOR_AUTH')), 'no auth lines')
  return env
}

/** A request with a `Host` of our choosing (fetch will not send one); its answer's JSON. */
function sendWithHost(url: string, host: string, init: { method: string; body?: FormData }) {
  return new Promise<Record<string, unknown>>((resolve, reject) => {
    void (async () => {
      const encoded = init.body ? new Response(init.body) : undefined
      const body = encoded ? Buffer.from(await encoded.arrayBuffer()) : undefined
      const headers: Record<string, string> = { Host: host }
      if (encoded && body) {
        headers['Content-Type'] = encoded.headers.get('content-type') ?? ''
        headers['Content-Length'] = String(body.length)
      }
      const req = httpRequest(url, { method: init.method, headers }, (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (c) => {
          text += c
        })
        res.on('end', () => resolve(JSON.parse(text)))
      })
      req.on('error', reject)
      req.end(body)
    })().catch(reject)
  })
}

async function codeOf(res: Response): Promise<string> {
  const body = await res.json()
  return body.code ?? body.error?.code ?? body.state
}

test('started as the documented unit starts it, without auth lines, behind the documented nginx site or a bare proxy_pass one, the server stores nothing for anyone', async (t) => {
  const root = await siteRoot(t)
  const dataDir = await mkdtemp(join(tmpdir(), 'ueditor-unit-'))
  t.after(() => rm(dataDir, { recursive: true, force: true }))
  const env = {
    ...documentedEnvFile(),
    UEDITOR_DATA_DIR: dataDir,
    // What the finding turned on; each of them must refuse an anonymous caller too.
    UEDITOR_DOCUMENTS_ENABLED: 'true',
    UEDITOR_TUS_ENABLED: 'true',
    UEDITOR_LIMIT_MIN_FREE_BYTES: '0',
  }
  const port = await freePort()
  const node = await startCliNode(t, port, env)
  assert.match(node.output(), /auth: +not configured: uploads, listings and captures are refused/)
  const documented = await startNginx(t, port, root)
  if (!documented) return
  const bare = await startBareNginx(t, port)
  assert.ok(bare)

  for (const url of [documented, bare]) {
    const config = await (await fetch(`${url}/ueditor?action=config`)).json()
    assert.equal(config.imageActionName, 'image', `${url}: the page still loads its configuration`)
    assert.equal(await uploadPng(url, {}), 'UE_AUTH_NOT_CONFIGURED', url)
    const list = await fetch(`${url}/ueditor?action=listImage&start=0&size=20`)
    assert.equal(await codeOf(list), 'UE_AUTH_NOT_CONFIGURED', url)
    const materials = await fetch(`${url}/materials/categories`)
    assert.equal(materials.status, 403)
    assert.equal(await codeOf(materials), 'UE_AUTH_NOT_CONFIGURED', url)
    // A client that writes this machine's name into Host, which the documented site passes on.
    for (const host of ['127.0.0.1', 'localhost', `127.0.0.1:${port}`]) {
      const form = new FormData()
      form.append('upfile', blob(png(16, 16), 'image/png'), 'a.png')
      const answer = await sendWithHost(`${url}/ueditor?action=image`, host, {
        method: 'POST',
        body: form,
      })
      assert.equal(answer.code, 'UE_AUTH_NOT_CONFIGURED', `${url} with Host: ${host}`)
    }
  }
  // The bare site passes every path, so the documents API and tus are reachable through it.
  const saved = await fetch(`${bare}/documents/first-article`, {
    method: 'PUT',
    headers: { 'Content-Type': 'text/html' },
    body: '<p>hello</p>',
  })
  assert.equal(saved.status, 403)
  assert.equal(await codeOf(saved), 'UE_AUTH_NOT_CONFIGURED')
  const created = await fetch(`${bare}/tus`, {
    method: 'POST',
    headers: { 'Tus-Resumable': '1.0.0', 'Upload-Length': '10' },
  })
  assert.equal(created.status, 403)
  assert.equal(await codeOf(created), 'UE_AUTH_NOT_CONFIGURED')

  node.child.kill('SIGTERM')
  assert.equal(await node.exited, 0, node.output())
  // Nothing was stored: the same data folder, now open on purpose, has no file and no document.
  const files = await readdir(dataDir, { recursive: true, withFileTypes: true })
  assert.deepEqual(
    files.filter((f) => f.isFile() && !/^ueditor\.db(-wal|-shm)?$/.test(f.name)).map((f) => f.name),
    [],
  )
  const open = await startCliNode(t, port, { ...env, UEDITOR_AUTH: 'none' })
  const direct = `http://127.0.0.1:${port}`
  const listed = await (await fetch(`${direct}/ueditor?action=listImage&start=0&size=20`)).json()
  assert.equal(listed.total, 0, JSON.stringify(listed))
  assert.equal((await fetch(`${direct}/documents/first-article`)).status, 404)
  // UEDITOR_AUTH=none lets anyone through, on purpose.
  assert.equal(await uploadPng(bare, {}), 'SUCCESS')
  assert.equal(await uploadPng(documented, {}), 'SUCCESS')
  open.child.kill('SIGTERM')
  await open.exited
})

test('behind the documented nginx site, the recipe’s server refuses an upload without a credential and stores one with it', async (t) => {
  const root = await siteRoot(t)
  const srv = await startTestServer(t, recipe({ limits: { minFreeBytes: 0 } }))
  const url = await startNginx(t, portOf(srv), root)
  if (!url) return
  assert.equal(await uploadPng(url, {}), 'UE_UNAUTHORIZED')
  assert.equal(await uploadPng(url, await bearer()), 'SUCCESS')
})

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const

/** The paths on this server that a config answer names (`/tus`, `/s3`, `/formula.svg?{}`). */
function namedPaths(answer: unknown): string[] {
  const found: string[] = []
  const walk = (value: unknown) => {
    if (typeof value === 'string') {
      if (value.startsWith('/') && !value.startsWith('//'))
        found.push(new URL(value.replaceAll('{}', ''), 'http://x').pathname)
    } else if (value && typeof value === 'object') for (const v of Object.values(value)) walk(v)
  }
  walk(answer)
  return [...new Set(found)]
}

test('every route of the server’s route table is passed through the documented nginx site with every method, and /metrics is not passed', async (t) => {
  const root = await siteRoot(t)
  const s3 = await startS3rver()
  t.after(() => s3.close())
  // Every route on: tus, direct uploads (S3 storage), documents, metrics, materials, formula.
  const srv = await startTestServer(
    t,
    recipe({
      storage: s3.storageConfig(await s3.createBucket()),
      documents: { enabled: true },
      limits: { minFreeBytes: 0 },
    }),
  )
  const url = await startNginx(t, portOf(srv), root)
  if (!url) return
  const headers = await bearer()
  const { mounts, config } = srv.ue
  const mounted = (path: string) =>
    [path, `${path}/probe`].find((p) => isMounted(mounts, p)) ?? assert.fail(`${path} is served`)
  // What the route table answers: each exact path, and a path under each prefix; ...
  const paths = new Set([...mounts.exact, ...mounts.prefixes.map((p) => `${p}probe`)])
  // ... every configured route, which this server must have (switch a new one on above); ...
  for (const at of Object.values(config.routes)) paths.add(mounted(at))
  // ... and every path the config answer hands the editor and its upload helper.
  const answer = await (await fetch(`${srv.url}${config.routes.editor}?action=config`)).json()
  const named = namedPaths(answer)
  for (const key of ['uploadTusUrl', 'uploadDirectUrl'])
    assert.ok(named.includes(answer[key]), `the config answer names ${key}`)
  for (const path of named) paths.add(mounted(path))

  const passed = new Set<string>()
  const wrong: string[] = []
  for (const path of [...paths].sort())
    for (const method of METHODS) {
      const direct = await fetch(`${srv.url}${path}`, { method, headers })
      const proxied = await fetch(`${url}${path}`, { method, headers })
      await direct.arrayBuffer()
      const body = await proxied.text()
      const byServer = proxied.headers.get('x-request-id') !== null
      if (path === config.metrics.path) {
        if (byServer || proxied.status < 400 || body.includes('process_start_time_seconds'))
          wrong.push(`${method} ${path}: ${proxied.status} from the server, not refused by nginx`)
      } else if (!byServer || proxied.status !== direct.status)
        wrong.push(
          `${method} ${path}: ${proxied.status} ${byServer ? 'from the server' : 'from nginx'}, directly ${direct.status}`,
        )
      else passed.add(path)
    }
  assert.deepEqual(wrong, [], await nginxErrors(url))
  t.diagnostic(`passed: ${[...passed].join(' ')}`)
  for (const path of ['/tus', '/s3/probe', '/documents/probe', config.routes.editor])
    assert.ok(passed.has(path), path)
  const scrape = await fetch(`${srv.url}${config.metrics.path}`, {
    headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
  })
  assert.equal(scrape.status, 200, 'the node itself answers its scraper')
  await scrape.arrayBuffer()
})

const MB = 1024 * 1024

/** A tus upload of `size` bytes of a video created through `url`; answers its upload URL. */
async function createTus(url: string, size: number, headers: Record<string, string>) {
  const created = await tusFetch(`${url}/tus`, {
    method: 'POST',
    headers: {
      ...headers,
      'Upload-Length': String(size),
      'Upload-Metadata': tusMetadata({ filename: 'clip.mp4', filetype: 'video/mp4' }),
    },
  })
  assert.equal(created.status, 201, created.text)
  return new URL(created.headers.get('location') ?? '', url).href
}

test('through the documented nginx site, a tus PATCH cut off part way keeps the bytes that arrived, and the upload resumes from there', async (t) => {
  const root = await siteRoot(t)
  const dir = await tempDir(t, 'ue-tus-nginx-')
  const size = 60 * MB
  const path = join(dir, 'clip.mp4')
  const digest = await writeVideo(path, size)
  const srv = await startTestServer(t, recipe({ limits: { minFreeBytes: 0 } }))
  const url = await startNginx(t, portOf(srv), root)
  if (!url) return
  const headers = await bearer()
  const upload = await createTus(url, size, headers)

  // Half of one PATCH of the whole file, then the connection is gone.
  await patchBrokenOff(upload, { path, offset: 0, size, breakAfter: 30 * MB, headers })
  const offset = await eventually(
    async () => {
      const head = await tusFetch(upload, { method: 'HEAD', headers })
      return head.status === 200 ? Number(head.headers.get('upload-offset')) : 0
    },
    { until: (n) => n > 0, timeoutMs: 15_000, what: "the broken-off PATCH's bytes kept" },
  )
  t.diagnostic(`kept ${offset} of the ${30 * MB} bytes sent`)
  assert.ok(offset <= 30 * MB, String(offset))

  const done = await patchRest(upload, { path, offset, size, headers })
  assert.equal(done.status, 200, `${done.text}\n${await nginxErrors(url)}`)
  const result = done.json()
  assert.equal(result.state, 'SUCCESS', done.text)
  assert.equal(result.size, size)
  const stored = await fetch(`${url}${result.url}`)
  assert.equal(stored.status, 200)
  assert.equal(await sha256Of(Readable.fromWeb(stored.body as never)), digest)
})

test('through the documented nginx site, one tus PATCH larger than the multipart body limit passes whole', async (t) => {
  const root = await siteRoot(t)
  const limit = siteLocation(documentedSite(), 'ueditor').get('client_max_body_size')
  assert.ok(limit, 'the first location limits request bodies')
  const size = nginxSize(limit) + 4 * MB
  const dir = await tempDir(t, 'ue-tus-nginx-')
  const path = join(dir, 'long.mp4')
  await writeVideo(path, size)
  const srv = await startTestServer(
    t,
    recipe({ limits: { minFreeBytes: 0 }, editor: { videoMaxSize: size } }),
  )
  const url = await startNginx(t, portOf(srv), root)
  if (!url) return
  const headers = await bearer()
  const upload = await createTus(url, size, headers)
  const done = await patchRest(upload, { path, offset: 0, size, headers })
  assert.equal(done.status, 200, `${done.text}\n${await nginxErrors(url)}`)
  assert.equal(done.json().state, 'SUCCESS', done.text)
  assert.equal(done.json().size, size)
})

test('the tus-js-client example of uploads.md, run as written through the documented nginx site, sends its file in chunks of its chunkSize', async (t) => {
  const example = documentedBlock('uploads.md', 'js', 'new tus.Upload(file')
  const chunkSize = /chunkSize: ([\d *]+),/.exec(example)?.[1]
  assert.ok(chunkSize, 'the example sets a chunkSize')
  const bytes = Number(Function(`return ${chunkSize}`)())
  const uppy = documentedBlock('uploads.md', 'js', "from '@uppy/tus'")
  assert.ok(uppy.includes(`chunkSize: ${chunkSize},`), 'the Uppy example sends the same chunks')

  const root = await siteRoot(t)
  const srv = await startTestServer(t, recipe({ limits: { minFreeBytes: 0 } }))
  const url = await startNginx(t, portOf(srv), root)
  if (!url) return
  const token = await hsToken({ sub: 'alice', aud: AUDIENCE })
  const file = Object.assign(Buffer.concat([MP4, Buffer.alloc(2 * bytes + MB - MP4.length, 3)]), {
    name: 'clip.mp4',
    type: 'video/mp4',
  })
  const chunks: number[] = []
  const outcome = new Promise<string>((resolve, reject) => {
    // The example's own options, with what the test watches added around them.
    class Upload extends tus.Upload {
      constructor(input: Buffer, options: tus.UploadOptions) {
        super(input, {
          ...options,
          endpoint: `${url}${options.endpoint}`,
          onChunkComplete: (sent) => chunks.push(sent),
          onError: reject,
          onSuccess: (payload) => {
            options.onSuccess?.(payload)
            resolve(payload.lastResponse.getBody())
          },
        })
      }
    }
    Function('tus', 'file', 'token', example)({ Upload }, file, token)
  })
  const result = JSON.parse(await outcome)
  assert.equal(result.state, 'SUCCESS', JSON.stringify(result))
  assert.equal(result.size, file.length)
  assert.deepEqual(chunks, [bytes, bytes, MB])
})

test('behind the documented nginx site, two clients have their own failed sign-in throttle, and the access log names each', async (t) => {
  const root = await siteRoot(t)
  const log = jsonLog()
  const srv = await startTestServer(t, recipe({ auth: { failuresPerMinute: 2 } }), {
    logger: log.logger,
  })
  const url = await startNginx(t, portOf(srv), root)
  if (!url) return
  const list = async (forwardedFor: string, credential: Record<string, string>) => {
    const res = await fetch(`${url}/ueditor?action=listImage&start=0&size=5`, {
      headers: { 'X-Forwarded-For': forwardedFor, ...credential },
    })
    const answer = await res.json()
    return answer.code ?? answer.state
  }
  const wrong = { Authorization: 'Bearer not-a-token-of-this-site' }
  assert.equal(await list('203.0.113.7', wrong), 'UE_UNAUTHORIZED')
  assert.equal(await list('203.0.113.7', wrong), 'UE_UNAUTHORIZED')
  assert.equal(await list('203.0.113.7', wrong), 'UE_AUTH_THROTTLED')
  // The other client's failures are its own: its first wrong token is checked, not throttled.
  assert.equal(await list('203.0.113.8', wrong), 'UE_UNAUTHORIZED')
  assert.equal(await list('203.0.113.8', await bearer('bob')), 'SUCCESS')
  // A valid credential is served even from the throttled address.
  assert.equal(await list('203.0.113.7', await bearer()), 'SUCCESS')
  const clients = new Set(
    log.records.filter((r) => r.msg === 'request' && r.route === 'editor').map((r) => r.client),
  )
  assert.deepEqual([...clients].sort(), ['203.0.113.7', '203.0.113.8'])
})

test('behind the documented nginx site, two clients with different addresses get separate upload limits', async (t) => {
  const root = await siteRoot(t)
  const srv = await startTestServer(t, {
    auth: { mode: 'none' },
    limits: { uploadsPerMinute: 2, minFreeBytes: 0 },
    http: { trustProxy: documentedSetting('UEDITOR_TRUST_PROXY').split(',') },
  })
  const url = await startNginx(t, portOf(srv), root)
  if (!url) return
  const first = { 'X-Forwarded-For': '203.0.113.7' }
  assert.equal(await uploadPng(url, first), 'SUCCESS')
  assert.equal(await uploadPng(url, first), 'SUCCESS')
  assert.equal(await uploadPng(url, first), 'UE_RATE_LIMITED')
  assert.equal(await uploadPng(url, { 'X-Forwarded-For': '203.0.113.8' }), 'SUCCESS')
  // An address the client writes into the header itself is not trusted past nginx.
  assert.equal(
    await uploadPng(url, { 'X-Forwarded-For': '198.51.100.1, 203.0.113.7' }),
    'UE_RATE_LIMITED',
  )
})

const MAIN = fileURLToPath(new URL('../../bin/ueditor-server.cjs', import.meta.url))

interface CliNode {
  child: ChildProcess
  exited: Promise<number | null>
  output(): string
}

/** `ueditor-server` as the unit starts it, on `port`; resolves once `/readyz` says ready. */
async function startCliNode(
  t: TestContext,
  port: number,
  env: NodeJS.ProcessEnv,
): Promise<CliNode> {
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH, ...env, HOST: '127.0.0.1', PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout?.on('data', (c) => {
    output += c
  })
  child.stderr?.on('data', (c) => {
    output += c
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  await untilReady(child, `http://127.0.0.1:${port}`, () => output)
  return { child, exited, output: () => output }
}

/** An image host that answers `/slow.png` after `delayMs`: a capture that keeps a node busy. */
async function slowImageHost(t: TestContext, delayMs: number) {
  let asked = 0
  const server = createHttpServer((_req, res) => {
    asked++
    setTimeout(() => {
      const body = png(16, 16)
      res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': body.length })
      res.end(body)
    }, delayMs)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  const { port } = server.address() as { port: number }
  return { host: `127.0.0.1:${port}`, url: `http://127.0.0.1:${port}/slow.png`, asked: () => asked }
}

test('behind the documented nginx site with two nodes, restarting each in turn under a stream of uploads fails none of them', async (t) => {
  const root = await siteRoot(t)
  const dataDir = await mkdtemp(join(tmpdir(), 'ueditor-nodes-'))
  t.after(() => rm(dataDir, { recursive: true, force: true }))
  const images = await slowImageHost(t, 3_000)
  // Both nodes as the recipe runs them, sharing one data folder on one machine.
  const env: NodeJS.ProcessEnv = {
    UEDITOR_DATA_DIR: dataDir,
    UEDITOR_TRUST_PROXY: documentedSetting('UEDITOR_TRUST_PROXY'),
    UEDITOR_AUTH_JWT_SECRET: SECRET,
    UEDITOR_AUTH_JWT_AUDIENCE: AUDIENCE,
    UEDITOR_CATCHER_ALLOW_HOSTS: images.host,
    UEDITOR_LIMIT_EXEMPT_USERS: 'alice',
    UEDITOR_LOG_LEVEL: 'warn',
  }
  const ports = [await freePort(), await freePort()] as const
  const nodes: CliNode[] = []
  for (const port of ports) nodes.push(await startCliNode(t, port, env))
  const url = await startNginx(t, [...ports], root)
  if (!url) return

  const headers = await bearer()
  const results: string[] = []
  let stop = false
  const stream = async () => {
    while (!stop) results.push(await uploadPng(url, headers))
  }
  const streams = [stream(), stream(), stream()]
  const done = () => results.filter((r) => r === 'SUCCESS').length
  // A refused connection to the node that is away is expected: nginx moves on.
  const failures = async () =>
    [
      ...(await nginxErrors(url)).split('\n').filter((l) => !l.includes('connect() failed')),
      ...nodes.map((n) => n.output()),
    ].join('\n')
  try {
    await eventually(() => done() >= 10, {
      timeoutMs: 30_000,
      intervalMs: 20,
      what: 'the stream is under way',
    })
    for (const [i, port] of ports.entries()) {
      const node = nodes[i] as CliNode
      // A capture in flight keeps the stopping node draining while the stream goes on.
      const asked = images.asked()
      const capture = fetch(`http://127.0.0.1:${port}/ueditor?action=catch`, {
        method: 'POST',
        body: new URLSearchParams({ 'source[]': images.url }),
        headers,
      })
      await eventually(() => images.asked() > asked, {
        timeoutMs: 30_000,
        intervalMs: 20,
        what: 'the capture reached the image host',
      })
      const before = results.length
      node.child.kill('SIGTERM')
      const captured = await (await capture).json()
      assert.equal(captured.list?.[0]?.state, 'SUCCESS', JSON.stringify(captured))
      assert.ok(results.length > before, 'uploads went on while the node drained')
      assert.equal(await node.exited, 0, node.output())
      nodes[i] = await startCliNode(t, port, env)
      const mark = done()
      await eventually(() => done() >= mark + 10, {
        timeoutMs: 30_000,
        intervalMs: 20,
        what: 'uploads went on after the restart',
      })
    }
  } finally {
    stop = true
    await Promise.all(streams)
  }
  assert.deepEqual(
    results.filter((r) => r !== 'SUCCESS'),
    [],
    await failures(),
  )
  // Every upload was stored once: no retry stored a second copy.
  const listed = await (
    await fetch(`${url}/ueditor?action=listImage&start=0&size=1`, { headers })
  ).json()
  assert.equal(listed.total, results.length + ports.length)
})
