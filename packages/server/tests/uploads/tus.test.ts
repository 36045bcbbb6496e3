import assert from 'node:assert/strict'
import { createReadStream } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3'
import * as tus from 'tus-js-client'
import type { ServerConfigInput } from '../../src/config/schema.js'
import {
  ALICE,
  AUDIENCE,
  BOB,
  hsToken,
  ISSUER,
  SECRET,
  TOKENS,
  unsignedToken,
} from '../helpers/auth.js'
import { eventually } from '../helpers/eventually.js'
import { PDF, png } from '../helpers/fixtures.js'
import { jsonLog } from '../helpers/json-log.js'
import { startS3FaultProxy, uploadsPart } from '../helpers/s3-fault-proxy.js'
import { startS3rver } from '../helpers/s3rver.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { tempDir } from '../helpers/temp-dir.js'
import { after, describe, type TestContext, test } from '../helpers/test.js'
import {
  patchBrokenOff,
  patchRest,
  sha256Of,
  type TusAnswer,
  tusFetch,
  tusMetadata,
  writeVideo,
} from '../helpers/tus.js'

const AUTH = { auth: { tokens: TOKENS } } satisfies ServerConfigInput
const PHP = Buffer.from('<?php system($_GET["c"]); ?>\n')
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` })
const VIDEO = { filename: 'holiday.mp4', filetype: 'video/mp4', category: 'video' }

function tusUrl(srv: TestServer): string {
  return `${srv.url}${srv.ue.config.routes.tus}`
}

/** A creation; with `body`, a creation-with-upload. */
function create(
  srv: TestServer,
  o: { length: number; metadata?: Record<string, string>; token?: string; body?: Buffer },
): Promise<TusAnswer> {
  return tusFetch(tusUrl(srv), {
    method: 'POST',
    headers: {
      ...bearer(o.token ?? ALICE),
      'Upload-Length': String(o.length),
      'Upload-Metadata': tusMetadata(o.metadata ?? VIDEO),
      ...(o.body ? { 'Content-Type': 'application/offset+octet-stream' } : {}),
    },
    ...(o.body ? { body: o.body } : {}),
  })
}

function uploadUrl(srv: TestServer, created: TusAnswer): string {
  const location = created.headers.get('location')
  assert.ok(location, `a Location: ${created.status} ${created.text}`)
  return new URL(location, `${srv.url}/`).href
}

async function resultOf(srv: TestServer, id: string, token = ALICE) {
  const res = await fetch(srv.action('uploadresult', `&id=${id}`), { headers: bearer(token) })
  return res.json()
}

const idOf = (url: string) => url.slice(url.lastIndexOf('/') + 1)

/** Every file of the local store, unfinished uploads included. */
async function everything(srv: TestServer): Promise<string[]> {
  return srv.storedFiles()
}

describe('tus uploads on disk', () => {
  test('a 300 MB upload broken off midway and resumed with HEAD and PATCH is stored with identical bytes', async (t) => {
    const dir = await tempDir(t, 'ue-tus-big-')
    const size = 300 * 1024 * 1024
    const path = join(dir, 'big.mp4')
    const digest = await writeVideo(path, size)
    const srv = await startTestServer(t, { ...AUTH, editor: { videoMaxSize: size } })
    const created = await create(srv, { length: size })
    assert.equal(created.status, 201, created.text)
    assert.equal(created.headers.get('tus-resumable'), '1.0.0')
    assert.ok(created.headers.get('upload-expires'), 'the expiry is announced')
    const url = uploadUrl(srv, created)

    await patchBrokenOff(url, {
      path,
      offset: 0,
      size,
      breakAfter: 120 * 1024 * 1024,
      headers: bearer(ALICE),
    })
    // The server keeps what arrived; the client asks how far it got.
    const head = await eventually(() => tusFetch(url, { method: 'HEAD', headers: bearer(ALICE) }), {
      until: (h) => h.status !== 423,
      timeoutMs: 30_000,
      what: 'a HEAD answered once the upload is no longer locked',
    })
    assert.equal(head.status, 200, head.text)
    const offset = Number(head.headers.get('upload-offset'))
    t.diagnostic(`resumed at ${offset} of ${size} bytes`)
    assert.ok(offset > 0 && offset < size, String(offset))
    assert.equal(head.headers.get('upload-length'), String(size))
    assert.equal((await resultOf(srv, idOf(url))).code, 'UE_UPLOAD_PENDING')

    const done = await patchRest(url, { path, offset, size, headers: bearer(ALICE) })
    assert.equal(done.status, 200, done.text)
    assert.equal(done.headers.get('upload-offset'), String(size))
    const result = done.json()
    assert.equal(result.state, 'SUCCESS', done.text)
    assert.equal(result.size, size)
    const stored = join(srv.storageRoot(), String(result.url).slice('/uploads/'.length))
    assert.equal(await sha256Of(createReadStream(stored)), digest)
    assert.deepEqual(await resultOf(srv, idOf(url)), result)
    // Nothing of the unfinished upload is left: only the stored file.
    assert.deepEqual(await everything(srv), [String(result.url).slice('/uploads/'.length)])
  })

  test('tus-js-client uploads a video, and its last answer is the upload result', async (t) => {
    const srv = await startTestServer(t, AUTH)
    const bytes = Buffer.alloc(3 * 1024 * 1024, 1)
    const { MP4 } = await import('../helpers/fixtures.js')
    MP4.copy(bytes)
    const outcome = await new Promise<{ url: string; body: string }>((resolve, reject) => {
      const upload = new tus.Upload(bytes, {
        endpoint: tusUrl(srv),
        headers: bearer(ALICE),
        metadata: VIDEO,
        chunkSize: 1024 * 1024,
        retryDelays: [],
        onError: reject,
        onSuccess: (payload) =>
          resolve({ url: upload.url ?? '', body: payload.lastResponse.getBody() }),
      })
      upload.start()
    })
    const result = JSON.parse(outcome.body)
    assert.equal(result.state, 'SUCCESS', outcome.body)
    assert.equal(result.size, bytes.length)
    assert.equal(result.original, 'holiday.mp4')
    assert.deepEqual(await resultOf(srv, idOf(outcome.url)), result)
  })

  test('over the size limit, a refused extension, over the quota or without credentials: refused at creation, nothing kept', async (t) => {
    const srv = await startTestServer(t, {
      ...AUTH,
      editor: { videoMaxSize: 1_000_000 },
      limits: { quotaBytes: 5_000_000 },
    })
    const tooBig = await create(srv, { length: 1_000_001 })
    assert.equal(tooBig.status, 413)
    assert.equal(tooBig.json().error?.code, 'UE_FILE_TOO_LARGE')
    assert.match(tooBig.json().error?.message ?? '', /size limit/)
    assert.equal(tooBig.headers.get('tus-resumable'), '1.0.0')

    const php = await create(srv, {
      length: 100,
      metadata: { filename: 'shell.php', filetype: 'application/x-php', category: 'file' },
    })
    assert.equal(php.status, 415)
    assert.equal(php.json().error?.code, 'UE_TYPE_NOT_ALLOWED')

    const first = await create(srv, {
      length: 4_000_000,
      metadata: { filename: 'a.pdf', category: 'file' },
    })
    assert.equal(first.status, 201)
    // 4 MB are reserved: 2 MB more do not fit in 5 MB.
    const over = await create(srv, { length: 2_000_000, metadata: { filename: 'b.pdf' } })
    assert.equal(over.status, 413)
    assert.equal(over.json().error?.code, 'UE_QUOTA_EXCEEDED')

    const nobody = await tusFetch(tusUrl(srv), {
      method: 'POST',
      headers: { 'Upload-Length': '10', 'Upload-Metadata': tusMetadata(VIDEO) },
    })
    assert.equal(nobody.status, 401)
    const deferred = await tusFetch(tusUrl(srv), {
      method: 'POST',
      headers: { ...bearer(ALICE), 'Upload-Defer-Length': '1' },
    })
    assert.equal(deferred.status, 400)
    assert.equal(deferred.json().error?.code, 'UE_REQUEST_INVALID')
    // Concatenation is not offered: tus's own answer, not a storage failure.
    const partial = await tusFetch(tusUrl(srv), {
      method: 'POST',
      headers: { ...bearer(ALICE), 'Upload-Length': '10', 'Upload-Concat': 'partial' },
    })
    assert.equal(partial.status, 501, partial.text)
    // Only the one accepted creation is kept: its empty file and the store's record of it.
    const id = idOf(uploadUrl(srv, first))
    assert.deepEqual(await everything(srv), [`.tus/${id}`, `.tus/${id}.json`])
  })

  test('a PHP script sent as an image is refused at its last byte and leaves nothing', async (t) => {
    const srv = await startTestServer(t, AUTH)
    const answer = await create(srv, {
      length: PHP.length,
      metadata: { filename: 'avatar.png', filetype: 'image/png', category: 'image' },
      body: PHP,
    })
    assert.equal(answer.status, 201, answer.text)
    const result = answer.json()
    assert.equal(result.code, 'UE_CONTENT_MISMATCH', answer.text)
    assert.notEqual(result.state, 'SUCCESS')
    assert.deepEqual(await everything(srv), [])
    const again = await resultOf(srv, idOf(uploadUrl(srv, answer)))
    assert.equal(again.code, 'UE_CONTENT_MISMATCH')
  })

  test('an image sent whole with its creation is stored through the image pipeline', async (t) => {
    const srv = await startTestServer(t, AUTH)
    const image = png(30, 20, { noise: true })
    const answer = await create(srv, {
      length: image.length,
      metadata: { filename: 'photo.png', filetype: 'image/png' },
      body: image,
    })
    assert.equal(answer.status, 201, answer.text)
    assert.equal(answer.json().state, 'SUCCESS', answer.text)
    assert.equal((await everything(srv)).length, 1)
  })

  test('another user can neither see, resume, terminate nor read the result of an upload', async (t) => {
    const srv = await startTestServer(t, AUTH)
    const created = await create(srv, { length: PDF.length * 2, metadata: { filename: 'a.pdf' } })
    const url = uploadUrl(srv, created)
    const half = await tusFetch(url, {
      method: 'PATCH',
      headers: {
        ...bearer(ALICE),
        'Upload-Offset': '0',
        'Content-Type': 'application/offset+octet-stream',
      },
      body: PDF,
    })
    assert.equal(half.status, 204, half.text)
    const unknown = `${tusUrl(srv)}/${'A'.repeat(22)}`
    for (const method of ['HEAD', 'PATCH', 'DELETE']) {
      const headers = {
        ...bearer(BOB),
        'Upload-Offset': String(PDF.length),
        'Content-Type': 'application/offset+octet-stream',
      }
      const theirs = await tusFetch(url, {
        method,
        headers,
        ...(method === 'PATCH' ? { body: PDF } : {}),
      })
      const none = await tusFetch(unknown, {
        method,
        headers,
        ...(method === 'PATCH' ? { body: PDF } : {}),
      })
      assert.equal(theirs.status, 404, method)
      assert.equal(theirs.text, none.text, method)
    }
    assert.deepEqual(await resultOf(srv, idOf(url), BOB), await resultOf(srv, 'A'.repeat(22), BOB))
    const head = await tusFetch(url, { method: 'HEAD', headers: bearer(ALICE) })
    assert.equal(head.headers.get('upload-offset'), String(PDF.length), 'nothing was added')

    // The owner terminates it: nothing is left, and the upload no longer exists.
    const ended = await tusFetch(url, { method: 'DELETE', headers: bearer(ALICE) })
    assert.equal(ended.status, 204, ended.text)
    assert.deepEqual(await everything(srv), [])
    assert.equal((await tusFetch(url, { method: 'HEAD', headers: bearer(ALICE) })).status, 404)
    assert.equal((await resultOf(srv, idOf(url))).code, 'UE_NOT_FOUND')
  })

  test('an abandoned upload is removed with its bytes once it expires', async (t) => {
    const srv = await startTestServer(t, {
      ...AUTH,
      uploads: { expiryMs: 400, sweepIntervalMs: 100 },
    })
    const created = await create(srv, { length: PDF.length * 2, metadata: { filename: 'a.pdf' } })
    const url = uploadUrl(srv, created)
    await tusFetch(url, {
      method: 'PATCH',
      headers: {
        ...bearer(ALICE),
        'Upload-Offset': '0',
        'Content-Type': 'application/offset+octet-stream',
      },
      body: PDF,
    })
    assert.equal((await everything(srv)).length, 2)
    await eventually(async () => assert.deepEqual(await everything(srv), []), {
      timeoutMs: 10_000,
      what: 'the upload and its bytes removed',
    })
    await eventually(
      async () => assert.equal((await resultOf(srv, idOf(url))).code, 'UE_NOT_FOUND'),
      {
        timeoutMs: 10_000,
        what: 'its result gone',
      },
    )
    assert.equal((await tusFetch(url, { method: 'HEAD', headers: bearer(ALICE) })).status, 404)
  })

  test('a query token is a credential as for every upload, and the config answer names the route', async (t) => {
    const srv = await startTestServer(t, { auth: { tokens: TOKENS, queryParam: 'token' } })
    const created = await tusFetch(`${tusUrl(srv)}?token=${ALICE}`, {
      method: 'POST',
      headers: {
        'Upload-Length': String(PDF.length),
        'Upload-Metadata': tusMetadata({ filename: 'a.pdf' }),
      },
    })
    assert.equal(created.status, 201, created.text)
    const config = await (await fetch(srv.action('config', `&token=${ALICE}`))).json()
    assert.equal(config.uploadTusUrl, '/tus')
  })

  test('a HEAD and a PATCH of the upload URL with the query token reach the upload', async (t) => {
    const srv = await startTestServer(t, { auth: { tokens: TOKENS, queryParam: 'token' } })
    const bytes = Buffer.concat([PDF, PDF])
    const created = await tusFetch(`${tusUrl(srv)}?token=${ALICE}`, {
      method: 'POST',
      headers: {
        'Upload-Length': String(bytes.length),
        'Upload-Metadata': tusMetadata({ filename: 'a.pdf' }),
      },
    })
    assert.equal(created.status, 201, created.text)
    const url = `${uploadUrl(srv, created)}?token=${ALICE}`
    const patch = (offset: number, body: Buffer) =>
      tusFetch(url, {
        method: 'PATCH',
        headers: {
          'Upload-Offset': String(offset),
          'Content-Type': 'application/offset+octet-stream',
        },
        body,
      })
    const first = await patch(0, PDF)
    assert.equal(first.status, 204, first.text)
    const head = await tusFetch(url, { method: 'HEAD' })
    assert.equal(head.status, 200, head.text)
    assert.equal(head.headers.get('upload-offset'), String(PDF.length))
    const last = await patch(PDF.length, PDF)
    assert.equal(last.status, 200, last.text)
    assert.equal(last.json().state, 'SUCCESS', last.text)
  })

  test('creations count against the per-minute upload rate, each chunk of an upload does not', async (t) => {
    const srv = await startTestServer(t, { ...AUTH, limits: { uploadsPerMinute: 2 } })
    const chunk = 10
    const bytes = Buffer.concat([PDF, Buffer.alloc(6 * chunk - PDF.length, 32)])
    const url = uploadUrl(
      srv,
      await create(srv, { length: bytes.length, metadata: { filename: 'a.pdf' } }),
    )
    let last: TusAnswer | undefined
    for (let offset = 0; offset < bytes.length; offset += chunk) {
      last = await tusFetch(url, {
        method: 'PATCH',
        headers: {
          ...bearer(ALICE),
          'Upload-Offset': String(offset),
          'Content-Type': 'application/offset+octet-stream',
        },
        body: bytes.subarray(offset, offset + chunk),
      })
      assert.ok(
        last.status === 204 || last.status === 200,
        `${offset}: ${last.status} ${last.text}`,
      )
    }
    assert.equal(last?.json().state, 'SUCCESS')
    assert.equal((await create(srv, { length: 10, metadata: { filename: 'b.pdf' } })).status, 201)
    const third = await create(srv, { length: 10, metadata: { filename: 'c.pdf' } })
    assert.equal(third.status, 429)
    assert.equal(third.json().error?.code, 'UE_RATE_LIMITED')
  })

  test('a JWT is a credential as for every upload; a session cookie is not, from another site’s page', async (t) => {
    const jwt = await startTestServer(t, {
      auth: { jwt: { secret: SECRET, audience: AUDIENCE, issuer: ISSUER } },
    })
    const made = await create(jwt, {
      length: 10,
      token: await hsToken({ sub: 'carol' }),
      metadata: { filename: 'a.pdf' },
    })
    assert.equal(made.status, 201, made.text)
    const forged = await create(jwt, {
      length: 10,
      token: unsignedToken('carol'),
      metadata: { filename: 'a.pdf' },
    })
    assert.equal(forged.status, 401)

    const hook = (request: Request) => {
      const m = /(?:^|;\s*)session=(\w+)/.exec(request.headers.get('cookie') ?? '')
      return m ? { user: m[1] as string } : null
    }
    const cookie = await startTestServer(t, {}, { authorize: hook })
    const post = (site: string) =>
      tusFetch(tusUrl(cookie), {
        method: 'POST',
        headers: {
          Cookie: 'session=dave',
          'Sec-Fetch-Site': site,
          'Upload-Length': '10',
          'Upload-Metadata': tusMetadata({ filename: 'a.pdf' }),
        },
      })
    assert.equal((await post('same-origin')).status, 201)
    const other = await post('cross-site')
    assert.equal(other.status, 403)
    assert.equal(other.json().error?.code, 'UE_CROSS_SITE')
  })

  test('with tus.enabled false the route is not served and the config answer does not name it', async (t) => {
    const srv = await startTestServer(t, { ...AUTH, tus: { enabled: false } })
    const created = await create(srv, { length: PDF.length, metadata: { filename: 'a.pdf' } })
    assert.equal(created.status, 404)
    assert.equal(created.json().error?.code, 'UE_NOT_FOUND')
    const config = await (await fetch(srv.action('config'), { headers: bearer(ALICE) })).json()
    assert.equal('uploadTusUrl' in config, false)
  })

  test('browsers on an allowed origin may send and read the tus headers', async (t) => {
    const origin = 'https://editor.example'
    const srv = await startTestServer(t, { ...AUTH, http: { corsOrigins: [origin] } })
    const preflight = await fetch(tusUrl(srv), {
      method: 'OPTIONS',
      headers: {
        Origin: origin,
        'Access-Control-Request-Method': 'PATCH',
        'Access-Control-Request-Headers': 'upload-offset,tus-resumable',
      },
    })
    assert.equal(preflight.status, 204)
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /PATCH/)
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Upload-Offset/)
    const created = await tusFetch(tusUrl(srv), {
      method: 'POST',
      headers: {
        ...bearer(ALICE),
        Origin: origin,
        'Upload-Length': '10',
        'Upload-Metadata': tusMetadata({ filename: 'a.pdf' }),
      },
    })
    assert.equal(created.headers.get('access-control-allow-origin'), origin)
    const exposed = created.headers.get('access-control-expose-headers') ?? ''
    for (const name of [
      'Location',
      'Upload-Offset',
      'Upload-Length',
      'Upload-Expires',
      'Tus-Resumable',
    ])
      assert.ok(exposed.includes(name), `${name} in ${exposed}`)
    const discovery = await tusFetch(tusUrl(srv), { method: 'OPTIONS' })
    assert.equal(discovery.headers.get('tus-version'), '1.0.0')
    assert.match(discovery.headers.get('tus-extension') ?? '', /creation-with-upload/)
  })

  test('a PATCH that stalls is ended by the body deadline, and what arrived is kept', async (t) => {
    const srv = await startTestServer(t, { ...AUTH, http: { bodyIdleTimeoutMs: 300 } })
    const created = await create(srv, { length: 1_000_000, metadata: { filename: 'a.pdf' } })
    const url = uploadUrl(srv, created)
    const target = new URL(url)
    const { request } = await import('node:http')
    await new Promise<void>((resolve) => {
      const req = request({
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'PATCH',
        headers: {
          ...bearer(ALICE),
          'Tus-Resumable': '1.0.0',
          'Upload-Offset': '0',
          'Content-Type': 'application/offset+octet-stream',
          'Content-Length': '1000000',
        },
      })
      req.on('response', (res) => res.resume().on('end', resolve))
      req.on('error', () => resolve())
      req.on('close', () => resolve())
      req.write(Buffer.concat([PDF, Buffer.alloc(1000, 32)]))
      // …and nothing more.
    })
    const head = await eventually(() => tusFetch(url, { method: 'HEAD', headers: bearer(ALICE) }), {
      until: (h) => h.status !== 423,
      timeoutMs: 30_000,
      what: 'a HEAD answered once the upload is no longer locked',
    })
    assert.equal(head.headers.get('upload-offset'), String(PDF.length + 1000))
  })
  test('a last chunk that stalls is answered UE_BODY_TIMEOUT by the body deadline, and what arrived is kept', async (t) => {
    const srv = await startTestServer(t, { ...AUTH, http: { bodyIdleTimeoutMs: 300 } })
    const size = PDF.length + 2000
    const url = uploadUrl(srv, await create(srv, { length: size, metadata: { filename: 'a.pdf' } }))
    const headers = {
      ...bearer(ALICE),
      'Upload-Offset': '0',
      'Content-Type': 'application/offset+octet-stream',
    }
    assert.equal((await tusFetch(url, { method: 'PATCH', headers, body: PDF })).status, 204)
    // The last chunk: half of it, then nothing more.
    const answer = await stalledPatch(url, {
      headers: { ...headers, 'Upload-Offset': String(PDF.length) },
      length: 2000,
      sent: Buffer.alloc(1000, 32),
    })
    assert.equal(answer.status, 408, answer.text)
    assert.equal(JSON.parse(answer.text).error?.code, 'UE_BODY_TIMEOUT', answer.text)
    assert.equal(answer.tusResumable, '1.0.0')
    const head = await eventually(() => tusFetch(url, { method: 'HEAD', headers: bearer(ALICE) }), {
      until: (h) => h.status !== 423,
      timeoutMs: 30_000,
      what: 'a HEAD answered once the upload is no longer locked',
    })
    assert.equal(head.headers.get('upload-offset'), String(PDF.length + 1000))
    const rest = await tusFetch(url, {
      method: 'PATCH',
      headers: { ...headers, 'Upload-Offset': String(PDF.length + 1000) },
      body: Buffer.alloc(1000, 32),
    })
    assert.equal(rest.json().state, 'SUCCESS', rest.text)
  })
})

/**
 * A PATCH that declares `length` bytes, sends `sent` and then nothing more, as a stalled client
 * does; answers the server's answer (given up after 20 s, so the test cannot hang).
 */
function stalledPatch(
  url: string,
  o: { headers: Record<string, string>; length: number; sent: Buffer },
): Promise<{ status: number; text: string; tusResumable: string | undefined }> {
  const target = new URL(url)
  return new Promise((resolve, reject) => {
    const req = request({
      host: target.hostname,
      port: target.port,
      path: `${target.pathname}${target.search}`,
      method: 'PATCH',
      headers: { ...o.headers, 'Tus-Resumable': '1.0.0', 'Content-Length': String(o.length) },
    })
    const giveUp = setTimeout(() => req.destroy(new Error('no answer within 20 s')), 20_000)
    req.on('response', (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        clearTimeout(giveUp)
        const tus = res.headers['tus-resumable']
        resolve({
          status: res.statusCode ?? 0,
          text: Buffer.concat(chunks).toString('utf8'),
          tusResumable: typeof tus === 'string' ? tus : undefined,
        })
        req.destroy()
      })
    })
    req.on('error', (e) => {
      clearTimeout(giveUp)
      reject(e)
    })
    req.write(o.sent)
  })
}

describe('tus uploads on S3', async () => {
  const s3 = await startS3rver()
  after(() => s3.close())

  async function s3Server(t: TestContext, config: ServerConfigInput = {}) {
    const bucket = await s3.createBucket()
    const srv = await startTestServer(t, {
      ...AUTH,
      ...config,
      storage: s3.storageConfig(bucket, 'site/'),
    })
    const keys = async () =>
      ((await s3.client.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map(
        (o) => o.Key as string,
      )
    const object = async (key: string) =>
      (await s3.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body as Readable
    return { srv, keys, object }
  }

  test('a 300 MB upload through tus-js-client, broken off midway and resumed, is stored with identical bytes', async (t) => {
    const dir = await tempDir(t, 'ue-tus-s3-')
    const size = 300 * 1024 * 1024
    const path = join(dir, 'big.mp4')
    const digest = await writeVideo(path, size)
    const { srv, keys, object } = await s3Server(t, { editor: { videoMaxSize: size } })
    let broken = false
    const outcome = await new Promise<{ url: string; body: string }>((resolve, reject) => {
      const upload = new tus.Upload(createReadStream(path), {
        endpoint: tusUrl(srv),
        headers: bearer(ALICE),
        metadata: VIDEO,
        uploadSize: size,
        chunkSize: 64 * 1024 * 1024,
        // As a browser client does: after a dropped connection, ask again (HEAD) and go on.
        retryDelays: [100, 500, 1000, 2000, 4000],
        onError: reject,
        onProgress: (sent) => {
          if (broken || sent < 100 * 1024 * 1024) return
          broken = true
          // The connection is dropped mid-PATCH; the same upload then resumes with HEAD.
          void upload.abort().then(() => {
            upload.options.uploadSize = size
            upload.file = createReadStream(path)
            upload.start()
          })
        },
        onSuccess: (payload) =>
          resolve({ url: upload.url ?? '', body: payload.lastResponse.getBody() }),
      })
      upload.start()
    })
    assert.ok(broken)
    const result = JSON.parse(outcome.body)
    assert.equal(result.state, 'SUCCESS', outcome.body)
    const key = `site/${String(result.url).slice('/uploads/'.length)}`
    assert.equal(await sha256Of(await object(key)), digest)
    assert.deepEqual(await keys(), [key], 'nothing of the unfinished upload is left')
    assert.deepEqual(await resultOf(srv, idOf(outcome.url)), result)
  })

  test('a PATCH broken off while the bucket still takes its parts is resumed from the bytes the bucket holds once it has them, and the object has identical bytes', async (t) => {
    const part = 8 * 1024 * 1024 // the S3 store's part size
    const size = 5 * part
    const dir = await tempDir(t, 'ue-tus-s3-cut-')
    const path = join(dir, 'cut.mp4')
    const digest = await writeVideo(path, size)
    const proxy = await startS3FaultProxy(s3.endpoint)
    t.after(() => proxy.close())
    const bucket = await s3.createBucket()
    const srv = await startTestServer(t, {
      ...AUTH,
      editor: { videoMaxSize: size },
      storage: { ...s3.storageConfig(bucket, 'site/'), endpoint: proxy.endpoint },
    })
    const url = uploadUrl(srv, await create(srv, { length: size }))
    // The bucket is slow to take part 2: part 3 is stored first.
    const slow = proxy.hold(uploadsPart(2))
    t.after(() => slow.release())
    const third = proxy.answered(uploadsPart(3))
    const headers = bearer(ALICE)
    await patchBrokenOff(url, { path, offset: 0, size, breakAfter: 3.5 * part, headers })
    await slow.held
    await third
    // The client asks how far it got and goes on at once, as tus-js-client does; the bucket
    // has part 2 a moment later.
    setTimeout(() => slow.release(), 1_000)
    let head: TusAnswer
    do head = await tusFetch(url, { method: 'HEAD', headers })
    while (head.status === 423)
    const offset = Number(head.headers.get('upload-offset'))
    t.diagnostic(`resumed at ${offset} of ${size} bytes`)
    const done = await patchRest(url, { path, offset, size, headers })
    const result = done.json()
    assert.equal(result.state, 'SUCCESS', done.text)
    const key = `site/${String(result.url).slice('/uploads/'.length)}`
    const stored = await s3.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))
    assert.equal(await sha256Of(stored.Body as Readable), digest)
    // What was answered is what the bucket held: every part the broken PATCH sent.
    assert.equal(offset, 3 * part)
  })

  test('a PHP script sent as an image is refused and nothing stays in the bucket', async (t) => {
    const { srv, keys } = await s3Server(t)
    const answer = await create(srv, {
      length: PHP.length,
      metadata: { filename: 'avatar.png', category: 'image' },
      body: PHP,
    })
    assert.equal(answer.json().code, 'UE_CONTENT_MISMATCH', answer.text)
    assert.deepEqual(await keys(), [])
  })

  test('a storage failure is answered UE_STORAGE_FAILED with the server’s own message; the storage’s text is only in its log', async (t) => {
    const proxy = await startS3FaultProxy(s3.endpoint)
    t.after(() => proxy.close())
    const bucket = await s3.createBucket()
    const log = jsonLog()
    const srv = await startTestServer(
      t,
      { ...AUTH, storage: { ...s3.storageConfig(bucket, 'site/'), endpoint: proxy.endpoint } },
      { logger: log.logger },
    )
    const denied = `User: arn:aws:iam::123456789012:user/ueditor is not authorized to perform: s3:PutObject on resource: "arn:aws:s3:::${bucket}/site/.tus/x"`
    const refused = (answer: TusAnswer, what: string) => {
      assert.equal(answer.status, 500, `${what}: ${answer.text}`)
      assert.equal(answer.headers.get('content-type'), 'application/json; charset=utf-8')
      assert.deepEqual(answer.json().error, {
        code: 'UE_STORAGE_FAILED',
        message: 'The file could not be saved',
      })
      for (const secret of ['arn:aws', '123456789012', bucket, 'not allowed', 'not authorized'])
        assert.ok(!answer.text.includes(secret), `${what} names ${secret}: ${answer.text}`)
      assert.equal(answer.headers.get('tus-resumable'), '1.0.0')
    }

    // The creation: the bucket refuses to start the upload.
    proxy.fail((req) => req.method === 'POST' && /[?&]uploads(?:[=&]|$)/.test(req.url ?? ''), {
      status: 403,
      code: 'AccessDenied',
      message: denied,
    })
    refused(await create(srv, { length: PDF.length, metadata: { filename: 'a.pdf' } }), 'POST')

    // A PATCH: the bucket lacks the method that stores a part.
    proxy.fail(null)
    const created = await create(srv, { length: PDF.length, metadata: { filename: 'a.pdf' } })
    assert.equal(created.status, 201, created.text)
    proxy.fail((req) => req.method === 'PUT' && /[?&]partNumber=/.test(req.url ?? ''), {
      status: 405,
      code: 'MethodNotAllowed',
      message: 'The specified method is not allowed against this resource.',
    })
    const patched = await tusFetch(uploadUrl(srv, created), {
      method: 'PATCH',
      headers: {
        ...bearer(ALICE),
        'Upload-Offset': '0',
        'Content-Type': 'application/offset+octet-stream',
      },
      body: PDF,
    })
    refused(patched, 'PATCH')
    assert.ok(proxy.failed >= 2, String(proxy.failed))

    // The operator's log has what the bucket said.
    const logged = JSON.stringify(log.records.filter((r) => r.level === 50 || r.level === 'error'))
    assert.ok(logged.includes('is not authorized to perform'), logged.slice(0, 2000))
    assert.ok(logged.includes('The specified method is not allowed'), logged.slice(0, 2000))
  })

  test('the object a tus upload is assembled into gets the server’s type for its category and extension, whatever type its metadata names', async (t) => {
    const proxy = await startS3FaultProxy(s3.endpoint)
    t.after(() => proxy.close())
    const bucket = await s3.createBucket()
    const srv = await startTestServer(t, {
      ...AUTH,
      storage: { ...s3.storageConfig(bucket, 'site/'), endpoint: proxy.endpoint },
    })
    const image = png(8, 8)
    const answer = await create(srv, {
      length: image.length,
      metadata: {
        filename: 'a.png',
        filetype: 'text/html',
        category: 'image',
        contentType: 'text/html',
        cacheControl: 'public, max-age=31536000',
      },
      body: image,
    })
    assert.equal(answer.json().state, 'SUCCESS', answer.text)
    const started = proxy.calls.filter(
      (c) => c.method === 'POST' && /^\/[^/]+\/site\/\.tus\/[^/?]+\?uploads/.test(c.url),
    )
    assert.equal(started.length, 1, proxy.calls.map((c) => `${c.method} ${c.url}`).join('\n'))
    assert.equal(started[0]?.headers['content-type'], 'image/png')
    assert.equal(started[0]?.headers['cache-control'], undefined)
  })

  test('an abandoned upload is aborted and removed once it expires', async (t) => {
    // Long enough for the creation and a PATCH to reach the bucket on a busy machine.
    const { srv, keys } = await s3Server(t, { uploads: { expiryMs: 3_000, sweepIntervalMs: 100 } })
    const created = await create(srv, {
      length: PDF.length * 2,
      metadata: { filename: 'a.pdf' },
    })
    const url = uploadUrl(srv, created)
    await tusFetch(url, {
      method: 'PATCH',
      headers: {
        ...bearer(ALICE),
        'Upload-Offset': '0',
        'Content-Type': 'application/offset+octet-stream',
      },
      body: PDF,
    })
    assert.ok((await keys()).length > 0, 'the unfinished upload is in the bucket before it expires')
    await eventually(async () => assert.deepEqual(await keys(), []), {
      timeoutMs: 10_000,
      what: 'the upload and its parts removed',
    })
    await eventually(
      async () => assert.equal((await resultOf(srv, idOf(url))).code, 'UE_NOT_FOUND'),
      {
        timeoutMs: 10_000,
        what: 'its result gone',
      },
    )
  })
})
