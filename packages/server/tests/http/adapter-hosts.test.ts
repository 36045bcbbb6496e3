import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import express from 'express'
import Fastify from 'fastify'
import Koa from 'koa'
import type { ServerConfigInput } from '../../src/config/schema.js'
import { ueditorExpress } from '../../src/http/express.js'
import { ueditorFastify } from '../../src/http/fastify.js'
import { ueditorKoa } from '../../src/http/koa.js'
import { toNodeHandler } from '../../src/http/node.js'
import {
  type AuthorizeHook,
  createUeditorServer,
  type UeditorOptions,
  type UeditorServer,
} from '../../src/index.js'
import type { HostContext } from '../../src/shared/request-info.js'
import { blob, PDF, png } from '../helpers/fixtures.js'
import { anonymousUnlessSet } from '../helpers/start-server.js'
import { type TestContext, test } from '../helpers/test.js'

async function embedded(
  t: TestContext,
  config: ServerConfigInput = {},
  options: Pick<UeditorOptions, 'authorize'> = {},
): Promise<{ ue: UeditorServer; dataDir: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ueditor-host-'))
  const ue = await createUeditorServer({
    ...options,
    env: {},
    config: {
      logLevel: 'silent',
      ...anonymousUnlessSet(config, options.authorize !== undefined),
      dataDir,
    },
  })
  t.after(async () => {
    await ue.close()
    await rm(dataDir, { recursive: true, force: true })
  })
  return { ue, dataDir }
}

async function listen(t: TestContext, server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.after(async () => {
    server.closeAllConnections()
    await new Promise((r) => server.close(r))
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

type Host = 'express' | 'koa' | 'fastify' | 'node'

/**
 * A host app of each kind that makes the classic mistake: something reads the request body
 * before the UEditor handler gets it.
 */
async function hostReadingBodiesFirst(t: TestContext, kind: Host, ue: UeditorServer) {
  const drain = async (req: AsyncIterable<unknown>) => {
    for await (const _ of req);
  }
  if (kind === 'express') {
    const app = express()
    app.use(express.raw({ type: '*/*', limit: '10mb' }))
    app.use('/ueditor', ueditorExpress(ue.editor))
    app.get('/alive', (_req, res) => void res.send('yes'))
    return listen(t, createServer(app))
  }
  if (kind === 'koa') {
    const app = new Koa()
    app.use(async (ctx, next) => {
      await drain(ctx.req)
      await next()
    })
    app.use(ueditorKoa(ue.editor, { path: '/ueditor' }))
    app.use(async (ctx) => {
      ctx.body = 'yes'
    })
    return listen(t, createServer(app.callback()))
  }
  if (kind === 'fastify') {
    const app = Fastify()
    app.addHook('onRequest', async (request) => {
      await drain(request.raw)
    })
    await app.register(ueditorFastify(ue.editor), { prefix: '/ueditor' })
    app.get('/alive', async () => 'yes')
    await app.listen({ port: 0, host: '127.0.0.1' })
    t.after(() => app.close())
    return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  }
  const editor = toNodeHandler(ue.editor)
  return listen(
    t,
    createServer(async (req, res) => {
      await drain(req)
      if (req.url?.startsWith('/ueditor')) editor(req, res)
      else res.end('yes')
    }),
  )
}

for (const kind of ['express', 'koa', 'fastify', 'node'] as const) {
  test(`a host app on ${kind} whose middleware read the body first gets UE_BODY_CONSUMED, stores nothing and stays up`, async (t) => {
    const { ue, dataDir } = await embedded(t, { locale: 'en' })
    const base = await hostReadingBodiesFirst(t, kind, ue)
    const form = new FormData()
    form.append('upfile', blob(png()), 'a.png')
    const res = await fetch(`${base}/ueditor?action=image`, { method: 'POST', body: form })
    const answer = await res.json()
    assert.equal(answer.code, 'UE_BODY_CONSUMED')
    assert.match(answer.state, /before any body parser/)
    const scrawl = await fetch(`${base}/ueditor?action=scrawl`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `upfile=${encodeURIComponent(png().toString('base64'))}`,
    })
    assert.equal((await scrawl.json()).code, 'UE_BODY_CONSUMED')
    // Stored files only: the dot-folders hold the store's own working state (spools, the
    // resumable uploads' folder), which exists before any upload.
    const stored = await readdir(join(dataDir, 'uploads'), { recursive: true }).catch(() => [])
    assert.deepEqual(
      stored.filter((f) => f.includes('.') && !f.startsWith('.')),
      [],
    )
    assert.equal(await (await fetch(`${base}/alive`)).text(), 'yes')
  })
}

/** A host app of each kind whose own auth puts `{ id }` on the request when `X-Session` is sent. */
async function hostWithItsOwnAuth(
  t: TestContext,
  kind: 'express' | 'koa' | 'fastify',
  ue: UeditorServer,
) {
  if (kind === 'express') {
    const app = express()
    app.use((req, _res, next) => {
      const session = req.headers['x-session']
      if (session) (req as typeof req & { user: unknown }).user = { id: session }
      next()
    })
    app.use('/ueditor', ueditorExpress(ue.editor))
    return listen(t, createServer(app))
  }
  if (kind === 'koa') {
    const app = new Koa()
    app.use(async (ctx, next) => {
      const session = ctx.get('x-session')
      if (session) ctx.state.user = { id: session }
      await next()
    })
    app.use(ueditorKoa(ue.editor, { path: '/ueditor' }))
    return listen(t, createServer(app.callback()))
  }
  const app = Fastify()
  app.decorateRequest('user', null)
  app.addHook('onRequest', async (request) => {
    const session = request.headers['x-session']
    if (typeof session === 'string')
      (request as typeof request & { user: unknown }).user = { id: session }
  })
  await app.register(ueditorFastify(ue.editor), { prefix: '/ueditor' })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.after(() => app.close())
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

for (const kind of ['express', 'koa', 'fastify'] as const) {
  test(`the authorize hook sees the ${kind} request and the user its auth put there`, async (t) => {
    const seen: (HostContext | undefined)[] = []
    const authorize: AuthorizeHook = (_request, host) => {
      seen.push(host)
      const user = host?.user as { id?: string } | null | undefined
      return user?.id ? { user: user.id } : null
    }
    const { ue } = await embedded(t, {}, { authorize })
    const base = await hostWithItsOwnAuth(t, kind, ue)
    const upload = (headers: Record<string, string>) => {
      const form = new FormData()
      form.append('upfile', blob(png()), 'a.png')
      return fetch(`${base}/ueditor?action=image`, { method: 'POST', body: form, headers })
    }
    assert.equal((await (await upload({ 'X-Session': 'alice' })).json()).state, 'SUCCESS')
    assert.equal((await (await upload({})).json()).code, 'UE_UNAUTHORIZED')
    assert.equal(seen[0]?.framework, kind)
    assert.deepEqual(seen[0]?.user, { id: 'alice' })
    assert.ok(seen[0]?.request, 'the framework request is handed over')
    const list = await (
      await fetch(`${base}/ueditor?action=listImage&start=0&size=10`, {
        headers: { 'X-Session': 'alice' },
      })
    ).json()
    assert.equal(list.total, 1)
  })
}

/** A GET of `path` exactly as written (fetch would resolve `..` first); the body as text. */
function rawText(base: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/`, { path }, (res) => {
      let body = ''
      res.on('data', (c) => {
        body += c
      })
      res.on('end', () => resolve(body))
    })
    req.on('error', reject)
    req.end()
  })
}

/**
 * A host app of each kind with the one-line mount, its own `/healthz` declared first, and an
 * answer of its own (`app`) for every other path; Fastify ignores trailing slashes.
 */
async function hostWithOneMount(t: TestContext, kind: Host, ue: UeditorServer) {
  if (kind === 'express') {
    const app = express()
    app.get('/healthz', (_req, res) => void res.send('app health'))
    app.use(ueditorExpress(ue))
    app.use((_req, res) => void res.send('app'))
    return listen(t, createServer(app))
  }
  if (kind === 'koa') {
    const app = new Koa()
    app.use(async (ctx, next) => {
      if (ctx.path === '/healthz') ctx.body = 'app health'
      else await next()
    })
    app.use(ueditorKoa(ue))
    app.use(async (ctx) => {
      ctx.body = 'app'
    })
    return listen(t, createServer(app.callback()))
  }
  if (kind === 'fastify') {
    const app = Fastify({ ignoreTrailingSlash: true })
    app.get('/healthz', async () => 'app health')
    await app.register(ueditorFastify(ue))
    app.setNotFoundHandler(async () => 'app')
    await app.listen({ port: 0, host: '127.0.0.1' })
    t.after(() => app.close())
    return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  }
  const handler = toNodeHandler(ue, (_req, res) => void res.end('app'))
  return listen(
    t,
    createServer((req, res) => {
      if (req.url === '/healthz') res.end('app health')
      else handler(req, res)
    }),
  )
}

for (const kind of ['express', 'koa', 'fastify', 'node'] as const) {
  test(`the one-line ${kind} mount serves the configured routes and leaves every other path to the app`, async (t) => {
    const { ue } = await embedded(t, {
      routes: {
        editor: '/cms/ue',
        files: '/cms/media',
        materials: '/cms/materials',
        tus: '/cms/tus',
      },
      formula: { path: '/cms/tex' },
    })
    const base = await hostWithOneMount(t, kind, ue)
    const config = await (await fetch(`${base}/cms/ue?action=config`)).json()
    assert.equal(config.imageActionName, 'image')
    assert.equal(config.formulaConfig.imageUrlTemplate, '/cms/tex.svg?{}')
    assert.equal(config.uploadTusUrl, '/cms/tus')
    const resumable = await fetch(`${base}/cms/tus`, {
      method: 'POST',
      headers: {
        'Tus-Resumable': '1.0.0',
        'Upload-Length': String(PDF.length),
        'Upload-Metadata': `filename ${Buffer.from('a.pdf').toString('base64')}`,
        'Content-Type': 'application/offset+octet-stream',
      },
      body: new Uint8Array(PDF),
    })
    assert.equal(resumable.status, 201)
    assert.match(resumable.headers.get('location') ?? '', /^\/cms\/tus\/[\w-]{22}$/)
    assert.equal((await resumable.json()).state, 'SUCCESS')
    const upload = `${base}${resumable.headers.get('location')}`
    const head = await fetch(upload, { method: 'HEAD', headers: { 'Tus-Resumable': '1.0.0' } })
    assert.equal(head.headers.get('upload-offset'), String(PDF.length))
    assert.equal(
      (await (await fetch(`${base}/cms/ue/?action=config`)).json()).imageActionName,
      'image',
    )
    const form = new FormData()
    form.append('upfile', blob(png(), 'image/png'), 'a.png')
    const up = await (
      await fetch(`${base}/cms/ue?action=image`, { method: 'POST', body: form })
    ).json()
    assert.match(up.url, /^\/cms\/media\//)
    const file = await fetch(`${base}${up.url}`)
    assert.equal(file.headers.get('content-type'), 'image/png')
    const svg = await fetch(`${base}/cms/tex.svg?${encodeURIComponent('x^2')}`)
    assert.equal(svg.headers.get('content-type'), 'image/svg+xml; charset=utf-8')
    const loaders = await fetch(`${base}/cms/materials/loaders.js`)
    assert.equal(loaders.headers.get('content-type'), 'text/javascript; charset=utf-8')
    assert.equal((await fetch(`${base}/readyz`)).status, 200)
    // The defaults are not configured here, so they belong to the app; so does a path that
    // only looks like ours before its dot segments are resolved (sent as written), and the
    // app's own /healthz.
    for (const path of [
      '/ueditor?action=config',
      '/uploads/x.png',
      '/tus',
      '/formula.svg?x',
      '/cms/media/../page',
      '/cms/media/%2e%2e/page',
    ])
      assert.equal(await rawText(base, path), 'app', path)
    assert.equal(await (await fetch(`${base}/healthz`)).text(), 'app health')
  })
}

for (const kind of ['express', 'koa', 'fastify', 'node'] as const) {
  test(`with S3 storage the one-line ${kind} mount serves the direct upload routes the config answer names`, async (t) => {
    const { ue } = await embedded(t, {
      auth: { tokens: ['alice:alice-token-0123456789abcdef'], queryParam: 'token' },
      routes: { editor: '/cms/ue', s3: '/cms/s3' },
      // Signing a POST policy asks nothing of the bucket: no request reaches this endpoint.
      storage: {
        driver: 's3',
        bucket: 'bucket',
        endpoint: 'http://127.0.0.1:9',
        forcePathStyle: true,
        accessKeyId: 'AKIDEXAMPLE',
        secretAccessKey: 'example-secret-0123456789',
      },
    })
    const base = await hostWithOneMount(t, kind, ue)
    const token = 'token=alice-token-0123456789abcdef'
    const config = await (await fetch(`${base}/cms/ue?action=config&${token}`)).json()
    assert.equal(config.uploadDirectUrl, '/cms/s3')
    const params = await fetch(
      `${base}${config.uploadDirectUrl}/s3/params?filename=a.png&type=image%2Fpng&metadata%5Bcategory%5D=image&${token}`,
    )
    assert.equal(params.status, 200)
    const body = await params.json()
    assert.match(body.fields.key, /^\.direct\//)
    const refused = await fetch(`${base}${config.uploadDirectUrl}/s3/multipart`, { method: 'POST' })
    assert.equal(refused.status, 401)
    assert.equal(await rawText(base, '/s3/s3/params'), 'app', 'the default path is the app’s')
  })
}

test('a trusted proxy’s X-Forwarded-For names the client the limits count against', async (t) => {
  // Mode none behind a proxy only when said on purpose; a guessed one refuses proxied requests.
  const { ue } = await embedded(t, {
    auth: { mode: 'none' },
    limits: { uploadsPerMinute: 2, minFreeBytes: 0 },
    http: { trustProxy: ['127.0.0.1'] },
  })
  const base = await listen(t, createServer(toNodeHandler(ue.editor)))
  const upload = async (forwardedFor: string) => {
    const form = new FormData()
    form.append('upfile', blob(png()), 'a.png')
    const res = await fetch(`${base}/ueditor?action=image`, {
      method: 'POST',
      body: form,
      headers: { 'X-Forwarded-For': forwardedFor },
    })
    return (await res.json()).code ?? 'SUCCESS'
  }
  assert.equal(await upload('203.0.113.7'), 'SUCCESS')
  assert.equal(await upload('203.0.113.7'), 'SUCCESS')
  assert.equal(await upload('203.0.113.7'), 'UE_RATE_LIMITED')
  // Another client behind the same proxy has its own allowance; an address the client itself
  // prepends to the header does not get it one.
  assert.equal(await upload('203.0.113.8'), 'SUCCESS')
  assert.equal(await upload('198.51.100.1, 203.0.113.7'), 'UE_RATE_LIMITED')
})

test('without http.trustProxy a forwarded header does not change who the client is', async (t) => {
  const { ue } = await embedded(t, {
    auth: { mode: 'none' },
    limits: { uploadsPerMinute: 1, minFreeBytes: 0 },
  })
  const base = await listen(t, createServer(toNodeHandler(ue.editor)))
  const codes: string[] = []
  for (const forwardedFor of ['203.0.113.1', '203.0.113.2']) {
    const form = new FormData()
    form.append('upfile', blob(png()), 'a.png')
    const res = await fetch(`${base}/ueditor?action=image`, {
      method: 'POST',
      body: form,
      headers: { 'X-Forwarded-For': forwardedFor },
    })
    codes.push((await res.json()).code ?? 'SUCCESS')
  }
  assert.deepEqual(codes, ['SUCCESS', 'UE_RATE_LIMITED'])
})

test('http.trustProxy refuses an entry that is neither an address, a range nor loopback', async () => {
  await assert.rejects(
    createUeditorServer({
      env: {},
      config: { logLevel: 'silent', http: { trustProxy: ['proxy.local'] } },
    }),
    /trustProxy/,
  )
})
