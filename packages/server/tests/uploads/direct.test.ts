import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
} from '@aws-sdk/client-s3'
import { build } from 'esbuild'
import type { Page } from 'playwright-core'
import { crossOriginProblem } from '../../src/config/cross-origin.js'
import { loadConfig } from '../../src/config/load.js'
import type { ServerConfigInput } from '../../src/config/schema.js'
import type { UeditorOptions } from '../../src/server.js'
import {
  ALICE,
  AUDIENCE,
  BOB,
  hsToken,
  ISSUER,
  recordingLogger,
  SECRET,
  TOKENS,
} from '../helpers/auth.js'
import { launchChromium } from '../helpers/chromium.js'
import { eventually } from '../helpers/eventually.js'
import { PDF, png } from '../helpers/fixtures.js'
import { startNginx } from '../helpers/nginx.js'
import { listsMultipartUploads, startS3FaultProxy } from '../helpers/s3-fault-proxy.js'
import { type RunningS3rver, startS3rver } from '../helpers/s3rver.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { tempDir } from '../helpers/temp-dir.js'
import { after, before, describe, type TestContext, test } from '../helpers/test.js'
import { tusMetadata } from '../helpers/tus.js'

const MB = 1024 * 1024

let s3: RunningS3rver
before(async () => {
  s3 = await startS3rver()
})
after(async () => {
  await s3.close()
})

interface Direct {
  srv: TestServer
  bucket: string
  /** `uploadDirectUrl` as the config answer names it, absolute. */
  endpoint: string
}

/**
 * A server storing in a fresh bucket of the test S3 server, with alice's, bob's and root's tokens;
 * through `endpoint` (a proxy in front of the S3 server) when given.
 */
async function startDirect(
  t: TestContext,
  config: ServerConfigInput = {},
  options: Pick<UeditorOptions, 'authorize'> = {},
  endpoint?: string,
): Promise<Direct> {
  const bucket = await s3.createBucket()
  const srv = await startTestServer(
    t,
    {
      auth: { tokens: TOKENS, queryParam: 'token' },
      images: { enabled: false },
      ...config,
      storage: { ...s3.storageConfig(bucket), ...(endpoint ? { endpoint } : {}) },
    },
    options,
  )
  const answer = (await (await fetch(srv.action('config', `&token=${ALICE}`))).json()) as {
    uploadDirectUrl?: string
  }
  assert.equal(typeof answer.uploadDirectUrl, 'string', 'the config answer names uploadDirectUrl')
  return { srv, bucket, endpoint: new URL(answer.uploadDirectUrl as string, srv.url).href }
}

interface Reply {
  status: number
  body: Record<string, unknown> & { error?: { code: string } }
}

/** One call of Uppy's Companion client, as Uppy sends it, with the token in the query. */
async function call(
  d: Direct,
  path: string,
  o: { method?: string; json?: unknown; token?: string | null } = {},
): Promise<Reply> {
  const url = new URL(`${d.endpoint}/s3${path}`)
  if (o.token !== null) url.searchParams.set('token', o.token ?? ALICE)
  const res = await fetch(url, {
    method: o.method ?? 'GET',
    ...(o.json === undefined
      ? {}
      : { body: JSON.stringify(o.json), headers: { 'content-type': 'application/json' } }),
  })
  return { status: res.status, body: (await res.json()) as Reply['body'] }
}

/** The form of a signed POST, with `bytes` as its file, sent to the bucket. */
async function postToBucket(signed: Reply['body'], bytes: Buffer, name: string) {
  const { url, fields } = signed as { url: string; fields: Record<string, string> }
  const form = new FormData()
  for (const [n, v] of Object.entries(fields)) form.append(n, v)
  form.append('file', new Blob([new Uint8Array(bytes)]), name)
  const posted = await fetch(url, { method: 'POST', body: form })
  assert.ok(posted.status < 300, `${posted.status} ${await posted.text()}`)
}

/** The query of a simple upload's params call. */
function paramsQuery(filename: string, type: string, category: string, size?: number): string {
  const q = new URLSearchParams({ filename, type, 'metadata[category]': category })
  if (size !== undefined) q.set('metadata[size]', String(size))
  return `/params?${q}`
}

/** Every object key in the bucket (pending ones included). */
async function objectsIn(bucket: string): Promise<string[]> {
  const out = await s3.client.send(new ListObjectsV2Command({ Bucket: bucket }))
  return (out.Contents ?? []).map((o) => o.Key as string).sort()
}

/** A multipart upload driven by hand, as Uppy does it: create, sign and put parts, complete. */
async function multipartUpload(
  d: Direct,
  file: { name: string; type: string; category: string; bytes: Buffer; partSize?: number },
  token = ALICE,
): Promise<{ created: Reply; completed?: Reply }> {
  const created = await call(d, '/multipart', {
    method: 'POST',
    json: { filename: file.name, type: file.type, metadata: { category: file.category } },
    token,
  })
  if (created.status !== 200) return { created }
  const { uploadId, key } = created.body as { uploadId: string; key: string }
  const partSize = file.partSize ?? 5 * MB
  const parts: { PartNumber: number; ETag: string }[] = []
  for (let n = 1, at = 0; at < file.bytes.length; n++, at += partSize) {
    const signed = await call(d, `/multipart/${uploadId}/${n}?key=${encodeURIComponent(key)}`, {
      token,
    })
    assert.equal(signed.status, 200, JSON.stringify(signed.body))
    const put = await fetch(signed.body.url as string, {
      method: 'PUT',
      body: new Uint8Array(file.bytes.subarray(at, at + partSize)),
    })
    assert.equal(put.status, 200)
    parts.push({ PartNumber: n, ETag: put.headers.get('etag') as string })
  }
  const completed = await call(
    d,
    `/multipart/${uploadId}/complete?key=${encodeURIComponent(key)}`,
    { method: 'POST', json: { parts }, token },
  )
  return { created, completed }
}

describe('uploads straight to the bucket, signed by the server (moto)', () => {
  test('a multipart upload through @uppy/aws-s3 itself in Chromium completes: the same bytes stored, listed, nothing pending', async (t) => {
    const browser = await launchChromium(t)
    if (!browser) return
    const site = await tempDir(t, 'ue-direct-site-')
    const bytes = Buffer.concat([PDF.subarray(0, 9), randomBytes(11 * MB)])
    await writeFile(join(site, 'file.pdf'), bytes)
    await writeFile(join(site, 'uppy.js'), await uppyBundle())
    await writeFile(
      join(site, 'index.html'),
      '<!doctype html><title>uppy</title><script src="/uppy.js"></script>',
    )
    const d = await startDirect(t, { site: { dir: site } })
    await s3.allowOrigins(d.bucket, [d.srv.url])

    const page = await (await browser.newContext()).newPage()
    await page.goto(`${d.srv.url}/index.html`)
    const outcome = await uppyUpload(page, {
      endpoint: d.endpoint,
      token: ALICE,
      file: '/file.pdf',
      name: 'report.pdf',
      type: 'application/pdf',
      category: 'file',
      multipart: true,
    })
    assert.deepEqual(outcome.failed, [])
    assert.ok(outcome.progress > 0, 'Uppy reported progress')
    const { location, key } = outcome.body
    assert.match(key, /^\.direct\/[A-Za-z0-9_-]{22}$/)
    assert.match(location, /^\/uploads\/file\/.+\.pdf$/)
    const stored = await fetch(`${d.srv.url}${location}`)
    assert.equal(stored.status, 200)
    assert.ok(Buffer.from(await stored.arrayBuffer()).equals(bytes), 'the very same bytes')
    const listed = (await (
      await fetch(d.srv.action('listFile', `&start=0&size=9&token=${ALICE}`))
    ).json()) as {
      list: { url: string; original: string }[]
    }
    assert.deepEqual(
      listed.list.map((e) => [e.url, e.original]),
      [[location, 'report.pdf']],
    )
    assert.deepEqual(
      (await objectsIn(d.bucket)).filter((k) => k.startsWith('.direct/')),
      [],
      'the pending object is gone',
    )

    // A simple upload through Uppy: one signed POST to the bucket, the result asked for after.
    await writeFile(join(site, 'a.png'), png(8, 8))
    const simple = await uppyUpload(page, {
      endpoint: d.endpoint,
      token: ALICE,
      file: '/a.png',
      name: 'a.png',
      type: 'image/png',
      category: 'image',
      multipart: false,
    })
    assert.deepEqual(simple.failed, [])
    const id = simple.body.key.split('/').pop()
    const result = (await (
      await fetch(d.srv.action('uploadresult', `&id=${id}&token=${ALICE}`))
    ).json()) as { state: string; url: string }
    assert.equal(result.state, 'SUCCESS', JSON.stringify(result))
    const image = await fetch(`${d.srv.url}${result.url}`)
    assert.ok(Buffer.from(await image.arrayBuffer()).equals(png(8, 8)))
  })

  test('a simple upload gets a POST policy for exactly its key, type, disposition and size range; the result comes from uploadresult', async (t) => {
    const d = await startDirect(t)
    const image = png(8, 8)
    const params = await call(
      d,
      `/params?filename=a.png&type=image%2Fpng&metadata%5Bcategory%5D=image&metadata%5Bsize%5D=${image.length}`,
    )
    assert.equal(params.status, 200, JSON.stringify(params.body))
    const { url, fields, id, method } = params.body as {
      url: string
      fields: Record<string, string>
      id: string
      method: string
    }
    assert.equal(method, 'POST')
    assert.equal(fields.key, `.direct/${id}`)
    const policy = JSON.parse(Buffer.from(fields.Policy as string, 'base64').toString('utf8')) as {
      expiration: string
      conditions: unknown[]
    }
    assert.deepEqual(
      policy.conditions.filter((c) => Array.isArray(c)),
      [
        ['content-length-range', 1, image.length],
        ['eq', '$Content-Type', 'image/png'],
        ['eq', '$Content-Disposition', 'attachment'],
      ],
    )
    assert.ok(
      policy.conditions.some((c) => JSON.stringify(c) === JSON.stringify({ key: `.direct/${id}` })),
    )
    const expiresIn = Date.parse(policy.expiration) - Date.now()
    assert.ok(expiresIn > 0 && expiresIn <= 600_000, `expires in ${expiresIn} ms`)

    const form = new FormData()
    for (const [name, value] of Object.entries(fields)) form.append(name, value)
    form.append('file', new Blob([new Uint8Array(image)], { type: 'image/png' }), 'a.png')
    const posted = await fetch(url, { method: 'POST', body: form })
    assert.ok(posted.status < 300, String(posted.status))
    const unchecked = await fetch(`${d.srv.url}/uploads/.direct/${id}`)
    assert.equal(unchecked.status, 404, 'bytes nobody checked yet are not served')

    const result = (await (
      await fetch(d.srv.action('uploadresult', `&id=${id}&token=${ALICE}`))
    ).json()) as {
      state: string
      url: string
      original: string
    }
    assert.equal(result.state, 'SUCCESS', JSON.stringify(result))
    assert.equal(result.original, 'a.png')
    const stored = await fetch(`${d.srv.url}${result.url}`)
    assert.ok(Buffer.from(await stored.arrayBuffer()).equals(image))
    assert.deepEqual(
      (await objectsIn(d.bucket)).filter((k) => k.startsWith('.direct/')),
      [],
    )
  })

  test('refusals leave nothing in the bucket: a .php name, a disguised .php as an image, a declared or real size over the limit, a file over the quota', async (t) => {
    const d = await startDirect(t, {
      editor: { fileMaxSize: 6 * MB },
      limits: { quotaBytes: 7 * MB, minFreeBytes: 0 },
    })
    const php = Buffer.from('<?php system($_GET["c"]); ?>\n')
    const named = await call(d, '/multipart', {
      method: 'POST',
      json: { filename: 'shell.php', type: 'image/png', metadata: { category: 'image' } },
    })
    assert.equal(named.status, 415)
    assert.equal(named.body.error?.code, 'UE_TYPE_NOT_ALLOWED')

    const disguised = await multipartUpload(d, {
      name: 'photo.png',
      type: 'image/png',
      category: 'image',
      bytes: php,
    })
    assert.equal(disguised.completed?.status, 415, JSON.stringify(disguised.completed?.body))
    assert.equal(disguised.completed?.body.error?.code, 'UE_CONTENT_MISMATCH')

    const declared = await call(d, '/multipart', {
      method: 'POST',
      json: {
        filename: 'big.pdf',
        type: 'application/pdf',
        metadata: { category: 'file', size: 7 * MB },
      },
    })
    assert.equal(declared.body.error?.code, 'UE_FILE_TOO_LARGE')

    const real = await multipartUpload(d, {
      name: 'big.pdf',
      type: 'application/pdf',
      category: 'file',
      bytes: Buffer.concat([PDF, randomBytes(6 * MB)]),
    })
    assert.equal(real.completed?.body.error?.code, 'UE_FILE_TOO_LARGE')

    const quota = await call(d, '/multipart', {
      method: 'POST',
      json: {
        filename: 'q.pdf',
        type: 'application/pdf',
        metadata: { category: 'file', size: 5 * MB },
      },
    })
    assert.equal(quota.status, 200)
    const second = await call(d, '/multipart', {
      method: 'POST',
      json: {
        filename: 'q2.pdf',
        type: 'application/pdf',
        metadata: { category: 'file', size: 5 * MB },
      },
    })
    assert.equal(
      second.body.error?.code,
      'UE_QUOTA_EXCEEDED',
      'the first one holds its reservation',
    )

    // moto checks no POST policy (S3 would refuse this file): a file longer than declared
    // still lands, and the ending refuses it, as it would with any store that let it through.
    const small = await call(
      d,
      '/params?filename=s.pdf&type=application%2Fpdf&metadata%5Bcategory%5D=file&metadata%5Bsize%5D=20',
    )
    const { url, fields, id } = small.body as {
      url: string
      fields: Record<string, string>
      id: string
    }
    const form = new FormData()
    for (const [name, value] of Object.entries(fields)) form.append(name, value)
    form.append('file', new Blob([new Uint8Array(PDF)], { type: 'application/pdf' }), 's.pdf')
    assert.ok((await fetch(url, { method: 'POST', body: form })).status < 300)
    const result = (await (
      await fetch(d.srv.action('uploadresult', `&id=${id}&token=${ALICE}`))
    ).json()) as { code: string }
    assert.equal(result.code, 'UE_FILE_TOO_LARGE')

    assert.deepEqual(await objectsIn(d.bucket), [])
  })

  test('another user cannot sign, list, complete or abort an upload; a call without a token is refused', async (t) => {
    const d = await startDirect(t)
    const created = await call(d, '/multipart', {
      method: 'POST',
      json: { filename: 'a.pdf', type: 'application/pdf', metadata: { category: 'file' } },
    })
    assert.equal(created.status, 200)
    const { uploadId, key } = created.body as { uploadId: string; key: string }
    const q = `?key=${encodeURIComponent(key)}`
    const calls = [
      { path: `/multipart/${uploadId}/1${q}` },
      { path: `/multipart/${uploadId}${q}` },
      {
        path: `/multipart/${uploadId}/complete${q}`,
        method: 'POST',
        json: { parts: [{ PartNumber: 1, ETag: '"x"' }] },
      },
      { path: `/multipart/${uploadId}${q}`, method: 'DELETE' },
    ]
    for (const c of calls) {
      const bob = await call(d, c.path, { ...c, token: BOB })
      assert.equal(bob.status, 404, `${c.method ?? 'GET'} ${c.path}`)
      assert.equal(bob.body.error?.code, 'UE_NOT_FOUND')
      const nobody = await call(d, c.path, { ...c, token: null })
      assert.equal(nobody.status, 401)
    }
    // Alice's upload is untouched: she can still sign and list it, then abort it.
    assert.equal((await call(d, `/multipart/${uploadId}/1${q}`)).status, 200)
    assert.deepEqual((await call(d, `/multipart/${uploadId}${q}`)).body, [])
    assert.equal((await call(d, `/multipart/${uploadId}${q}`, { method: 'DELETE' })).status, 200)
    assert.equal((await call(d, `/multipart/${uploadId}/1${q}`)).status, 404, 'gone once aborted')
  })

  test('a user may have limits.concurrentUploads direct uploads open at once, and each counts against the per-minute rate', async (t) => {
    const d = await startDirect(t, {
      limits: { concurrentUploads: 2, uploadsPerMinute: 4, minFreeBytes: 0 },
    })
    const open = () =>
      call(d, '/multipart', {
        method: 'POST',
        json: { filename: 'a.pdf', type: 'application/pdf', metadata: { category: 'file' } },
      })
    const first = await open()
    assert.equal((await open()).status, 200)
    const third = await open()
    assert.equal(third.status, 429)
    assert.equal(third.body.error?.code, 'UE_RATE_LIMITED')
    const { uploadId, key } = first.body as { uploadId: string; key: string }
    const q = `?key=${encodeURIComponent(key)}`
    assert.equal((await call(d, `/multipart/${uploadId}${q}`, { method: 'DELETE' })).status, 200)
    assert.equal((await open()).status, 200, 'an aborted upload frees its place')
    assert.equal((await open()).body.error?.code, 'UE_RATE_LIMITED', 'five a minute is over four')
    assert.equal(
      (
        await call(d, '/multipart', {
          method: 'POST',
          token: BOB,
          json: {
            filename: 'a.pdf',
            type: 'application/pdf',
            metadata: { category: 'file' },
          },
        })
      ).status,
      200,
      'another user has his own',
    )
  })

  test('with the host’s session cookie (the hook) a same-origin call is served and another site’s page is refused', async (t) => {
    const hook = (request: Request) => {
      const user = /(?:^|;\s*)session=(\w+)/.exec(request.headers.get('cookie') ?? '')?.[1]
      return user ? { user } : null
    }
    const d = await startDirect(t, { auth: {} }, { authorize: hook })
    const create = (headers: Record<string, string>) =>
      fetch(`${d.endpoint}/s3/multipart`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({
          filename: 'a.pdf',
          type: 'application/pdf',
          metadata: { category: 'file' },
        }),
      })
    const same = await create({ cookie: 'session=alice', 'sec-fetch-site': 'same-origin' })
    assert.equal(same.status, 200)
    const { uploadId, key } = (await same.json()) as { uploadId: string; key: string }
    const cross = await create({ cookie: 'session=alice', 'sec-fetch-site': 'cross-site' })
    assert.equal(cross.status, 403)
    assert.equal(((await cross.json()) as Reply['body']).error?.code, 'UE_CROSS_SITE')
    const q = `?key=${encodeURIComponent(key)}`
    const abort = (cookie: string) =>
      fetch(`${d.endpoint}/s3/multipart/${uploadId}${q}`, { method: 'DELETE', headers: { cookie } })
    assert.equal((await abort('session=bob')).status, 404)
    assert.equal((await abort('session=alice')).status, 200)
  })

  test('abandoned uploads are gone after their expiry: the multipart upload with its parts, the pending object, the row; and a multipart upload no row owns', async (t) => {
    const d = await startDirect(t, {
      uploads: { expiryMs: 1_500, sweepIntervalMs: 100 },
      limits: { quotaBytes: 10 * MB, minFreeBytes: 0 },
    })
    const created = await call(d, '/multipart', {
      method: 'POST',
      json: {
        filename: 'a.pdf',
        type: 'application/pdf',
        metadata: { category: 'file', size: 6 * MB },
      },
    })
    const { uploadId, key, id } = created.body as { uploadId: string; key: string; id: string }
    const signed = await call(d, `/multipart/${uploadId}/1?key=${encodeURIComponent(key)}`)
    await fetch(signed.body.url as string, {
      method: 'PUT',
      body: new Uint8Array(randomBytes(1000)),
    })
    const simple = await call(
      d,
      '/params?filename=b.pdf&type=application%2Fpdf&metadata%5Bcategory%5D=file&metadata%5Bsize%5D=100',
    )
    // The object of a simple upload that is never asked for: a client that went away.
    const { url, fields } = simple.body as { url: string; fields: Record<string, string> }
    const form = new FormData()
    for (const [name, value] of Object.entries(fields)) form.append(name, value)
    form.append('file', new Blob([new Uint8Array(PDF)]), 'b.pdf')
    assert.ok((await fetch(url, { method: 'POST', body: form })).status < 300)
    // A multipart upload under the folder whose row is gone (a crash between the two).
    const orphan = await s3.client.send(
      new CreateMultipartUploadCommand({ Bucket: d.bucket, Key: '.direct/AAAAAAAAAAAAAAAAAAAAAA' }),
    )
    assert.ok(orphan.UploadId)
    const open = () =>
      s3.client
        .send(new ListMultipartUploadsCommand({ Bucket: d.bucket, Prefix: '.direct/' }))
        .then((out) => (out.Uploads ?? []).map((u) => u.Key))
    assert.equal((await open()).length, 2)
    // The 6 MB reserved for the first upload is still held: 5 MB more do not fit the quota.
    const held = await call(d, '/multipart', {
      method: 'POST',
      json: {
        filename: 'c.pdf',
        type: 'application/pdf',
        metadata: { category: 'file', size: 5 * MB },
      },
    })
    assert.equal(held.body.error?.code, 'UE_QUOTA_EXCEEDED')

    await eventually(async () => ({ open: await open(), objects: await objectsIn(d.bucket) }), {
      until: (v) => v.open.length === 0 && v.objects.length === 0,
      timeoutMs: 15_000,
      what: 'no open upload and no object left',
    })
    const result = (await (
      await fetch(d.srv.action('uploadresult', `&id=${id}&token=${ALICE}`))
    ).json()) as { code: string }
    assert.equal(result.code, 'UE_NOT_FOUND', 'the row is gone')
    assert.equal(
      (await call(d, `/multipart/${uploadId}/2?key=${encodeURIComponent(key)}`)).status,
      404,
    )
    const freed = await call(d, '/multipart', {
      method: 'POST',
      json: {
        filename: 'c.pdf',
        type: 'application/pdf',
        metadata: { category: 'file', size: 5 * MB },
      },
    })
    assert.equal(freed.status, 200, 'the reservation went with the row')
  })

  test('a pending object gets the server’s type for its category and extension and is an attachment, whatever type the client names', async (t) => {
    const d = await startDirect(t, {
      security: { allowActiveContent: true },
      editor: { imageAllowFiles: ['.png', '.svg'], fileAllowFiles: ['.pdf', '.html'] },
    })
    const head = (key: string) =>
      s3.client.send(new HeadObjectCommand({ Bucket: d.bucket, Key: key }))
    const policyOf = (fields: Record<string, string>) =>
      (
        JSON.parse(Buffer.from(fields.Policy as string, 'base64').toString('utf8')) as {
          conditions: unknown[]
        }
      ).conditions.filter((c) => Array.isArray(c))

    // A PNG declared as HTML: signed, stored and served as a PNG to download.
    const image = png(8, 8)
    const html = await call(d, paramsQuery('a.png', 'text/html', 'image', image.length))
    assert.equal(html.status, 200, JSON.stringify(html.body))
    const fields = html.body.fields as Record<string, string>
    assert.equal(fields['Content-Type'], 'image/png')
    assert.equal(fields['Content-Disposition'], 'attachment')
    assert.deepEqual(policyOf(fields), [
      ['content-length-range', 1, image.length],
      ['eq', '$Content-Type', 'image/png'],
      ['eq', '$Content-Disposition', 'attachment'],
    ])
    await postToBucket(html.body, image, 'a.png')
    const pending = await head(`.direct/${html.body.id}`)
    assert.equal(pending.ContentType, 'image/png')
    assert.equal(pending.ContentDisposition, 'attachment')
    const result = (await (
      await fetch(d.srv.action('uploadresult', `&id=${html.body.id}&token=${ALICE}`))
    ).json()) as { state: string; url: string }
    assert.equal(result.state, 'SUCCESS', JSON.stringify(result))
    const stored = await head(result.url.slice('/uploads/'.length))
    assert.equal(stored.ContentDisposition, undefined, 'the stored file is not an attachment')

    // An allowed SVG, whatever it is declared as, waits as opaque bytes.
    const svg = await call(d, paramsQuery('a.svg', 'image/svg+xml', 'image'))
    assert.equal(
      (svg.body.fields as Record<string, string>)['Content-Type'],
      'application/octet-stream',
    )

    // A multipart upload of an allowed .html file declared as HTML: the same, once assembled.
    const created = await call(d, '/multipart', {
      method: 'POST',
      json: { filename: 'page.html', type: 'text/html', metadata: { category: 'file' } },
    })
    assert.equal(created.status, 200, JSON.stringify(created.body))
    const { uploadId, key } = created.body as { uploadId: string; key: string }
    const signed = await call(d, `/multipart/${uploadId}/1?key=${encodeURIComponent(key)}`)
    const put = await fetch(signed.body.url as string, {
      method: 'PUT',
      body: new Uint8Array(Buffer.from('<script>alert(1)</script>')),
    })
    assert.equal(put.status, 200)
    // As the bucket's owner: what the object is once its parts are put together.
    await s3.client.send(
      new CompleteMultipartUploadCommand({
        Bucket: d.bucket,
        Key: key,
        UploadId: uploadId,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: put.headers.get('etag') as string }] },
      }),
    )
    const assembled = await head(key)
    assert.equal(assembled.ContentType, 'application/octet-stream')
    assert.equal(assembled.ContentDisposition, 'attachment')
  })

  test('a part is signed, listed, completed or aborted only for the upload id the server recorded for that upload', async (t) => {
    const d = await startDirect(t)
    const open = async () => {
      const created = await call(d, '/multipart', {
        method: 'POST',
        json: { filename: 'a.pdf', type: 'application/pdf', metadata: { category: 'file' } },
      })
      assert.equal(created.status, 200, JSON.stringify(created.body))
      return created.body as { uploadId: string; key: string }
    }
    const mine = await open()
    const other = await open()
    // Another upload of the very same key, started in the bucket by someone else's hand.
    const stray = await s3.client.send(
      new CreateMultipartUploadCommand({ Bucket: d.bucket, Key: mine.key }),
    )
    const simple = await call(d, paramsQuery('b.pdf', 'application/pdf', 'file'))
    const q = (key: string) => `?key=${encodeURIComponent(key)}`
    const wrong = [
      { uploadId: other.uploadId, key: mine.key },
      { uploadId: stray.UploadId as string, key: mine.key },
      { uploadId: mine.uploadId, key: `.direct/${simple.body.id}` },
    ]
    for (const w of wrong) {
      const calls = [
        { path: `/multipart/${w.uploadId}/1${q(w.key)}` },
        { path: `/multipart/${w.uploadId}${q(w.key)}` },
        {
          path: `/multipart/${w.uploadId}/complete${q(w.key)}`,
          method: 'POST',
          json: { parts: [{ PartNumber: 1, ETag: '"x"' }] },
        },
        { path: `/multipart/${w.uploadId}${q(w.key)}`, method: 'DELETE' },
      ]
      for (const c of calls) {
        const answer = await call(d, c.path, c)
        assert.equal(answer.status, 404, `${c.method ?? 'GET'} ${c.path}`)
        assert.equal(answer.body.error?.code, 'UE_NOT_FOUND')
      }
    }
    // The recorded one is untouched.
    assert.equal((await call(d, `/multipart/${mine.uploadId}/1${q(mine.key)}`)).status, 200)
    assert.deepEqual((await call(d, `/multipart/${other.uploadId}${q(other.key)}`)).body, [])
  })

  test('a refused upload’s pending object is deleted even when the bucket refuses to list multipart uploads', async (t) => {
    const proxy = await startS3FaultProxy(s3.endpoint)
    t.after(() => proxy.close())
    proxy.fail(listsMultipartUploads, {
      status: 403,
      code: 'AccessDenied',
      message: 'Access Denied',
    })
    const d = await startDirect(t, {}, {}, proxy.endpoint)
    const php = Buffer.from('<?php system($_GET["c"]); ?>\n')

    const simple = await call(d, paramsQuery('photo.png', 'image/png', 'image', php.length))
    assert.equal(simple.status, 200, JSON.stringify(simple.body))
    await postToBucket(simple.body, php, 'photo.png')
    const result = (await (
      await fetch(d.srv.action('uploadresult', `&id=${simple.body.id}&token=${ALICE}`))
    ).json()) as { code: string }
    assert.equal(result.code, 'UE_CONTENT_MISMATCH')

    const multipart = await multipartUpload(d, {
      name: 'avatar.png',
      type: 'image/png',
      category: 'image',
      bytes: php,
    })
    assert.equal(multipart.completed?.body.error?.code, 'UE_CONTENT_MISMATCH')

    assert.deepEqual(await objectsIn(d.bucket), [], 'no pending object is left')
    const open = await s3.client.send(new ListMultipartUploadsCommand({ Bucket: d.bucket }))
    assert.deepEqual(open.Uploads ?? [], [])
  })

  test('the token in the path is read as the query token and never written to the log', async (t) => {
    const log = recordingLogger()
    const bucket = await s3.createBucket()
    const srv = await startTestServer(
      t,
      {
        logLevel: 'info',
        auth: { tokens: TOKENS, queryParam: 'token' },
        storage: s3.storageConfig(bucket),
      },
      { logger: log },
    )
    const res = await fetch(
      `${srv.url}/s3/token=${ALICE}/s3/params?filename=a.pdf&type=application%2Fpdf&metadata%5Bcategory%5D=file`,
    )
    assert.equal(res.status, 200, await res.clone().text())
    const wrong = await fetch(`${srv.url}/s3/token=not-a-token-0000000000/s3/params?filename=a.pdf`)
    assert.equal(wrong.status, 401)
    assert.ok(log.lines.some((l) => l.includes('"path":"/s3/token=…/s3/params"')))
    assert.ok(!log.lines.some((l) => l.includes(ALICE)), 'the token is not in the log')
  })
})

// Tests run from packages/server/dist/tests/uploads; the guide is at the repository's root.
const DEPLOY_MD = join(
  fileURLToPath(new URL('../../../../../', import.meta.url)),
  'docs',
  'deploy.md',
)

/** The ```nginx block of docs/deploy.md that holds `needle`, as written. */
function documentedNginx(needle: string): string {
  const blocks = [...readFileSync(DEPLOY_MD, 'utf8').matchAll(/```nginx\n([\s\S]*?)```/g)]
  const block = blocks.map((m) => m[1] as string).find((b) => b.includes(needle))
  assert.ok(block, `docs/deploy.md has an nginx block with ${needle}`)
  return block
}

describe('behind nginx with the access log format of docs/deploy.md', () => {
  test('a JWT in Uppy’s path segment or in a query string never reaches the access log', async (t) => {
    const bucket = await s3.createBucket()
    const srv = await startTestServer(t, {
      auth: { jwt: { secret: SECRET, audience: AUDIENCE, issuer: ISSUER }, queryParam: 'token' },
      storage: s3.storageConfig(bucket),
    })
    const logFormat = documentedNginx('log_format ueditor')
    const accessLog = documentedNginx('access_log /var/log/nginx/access.log ueditor;')
    const nginx = await startNginx(
      t,
      ({ port, dir }) => `${logFormat}
  server {
    listen 127.0.0.1:${port};
    ${accessLog.trim().replace('/var/log/nginx/access.log', `${dir}/access.log`)}
    location / {
      proxy_pass ${srv.url};
      proxy_set_header Host $host;
    }
  }`,
    )
    if (!nginx) return
    const jwt = await hsToken({ sub: 'alice' })

    const params = await fetch(
      `${nginx.url}/s3/token=${jwt}/s3/params?filename=a.pdf&type=application%2Fpdf&metadata%5Bcategory%5D=file`,
    )
    assert.equal(params.status, 200, await params.clone().text())
    await params.arrayBuffer()
    const created = await fetch(`${nginx.url}/tus?token=${jwt}`, {
      method: 'POST',
      headers: {
        'Tus-Resumable': '1.0.0',
        'Upload-Length': String(PDF.length),
        'Upload-Metadata': tusMetadata({ filename: 'a.pdf' }),
      },
    })
    assert.equal(created.status, 201, await created.text())
    const id = (created.headers.get('location') ?? '').split('/').pop()
    const head = await fetch(`${nginx.url}/tus/${id}?token=${jwt}`, {
      method: 'HEAD',
      headers: { 'Tus-Resumable': '1.0.0' },
    })
    assert.equal(head.status, 200)
    const config = await fetch(`${nginx.url}/ueditor?action=config&token=${jwt}`)
    assert.equal(config.status, 200)
    await config.arrayBuffer()

    const log = await eventually(
      () => readFile(`${nginx.dir}/access.log`, 'utf8').catch(() => ''),
      {
        until: (text) => text.split('\n').filter(Boolean).length >= 4,
        timeoutMs: 5_000,
        what: 'four access log lines',
      },
    )
    t.diagnostic(log)
    for (const line of [
      '"GET /s3/token=-/s3/params HTTP/1.1" 200',
      '"POST /tus HTTP/1.1" 201',
      `"HEAD /tus/${id} HTTP/1.1" 200`,
      '"GET /ueditor HTTP/1.1" 200',
    ])
      assert.ok(log.includes(line), `the access log has ${line}`)
    for (const part of jwt.split('.'))
      assert.ok(!log.includes(part), 'no part of the token is in the access log')
  })
})

describe('the config answer', () => {
  test('names uploadDirectUrl absolute when publicUrl is, and a relative one is a cross-origin problem', () => {
    const storage = { driver: 's3', bucket: 'bucket', endpoint: 'http://127.0.0.1:1' } as const
    const relative = loadConfig({
      env: {},
      overrides: { storage, http: { corsOrigins: ['https://cms.example'] } },
    })
    assert.equal(relative.editor.uploadDirectUrl, '/s3')
    assert.match(crossOriginProblem(relative)?.message ?? '', /uploadDirectUrl \(\/s3\)/)
    const absolute = loadConfig({
      env: {},
      overrides: {
        storage,
        routes: { s3: '/api/s3' },
        publicUrl: 'https://ue.example.com/app/uploads/',
      },
    })
    assert.equal(absolute.editor.uploadDirectUrl, 'https://ue.example.com/app/api/s3')
    const off = loadConfig({ env: {}, overrides: { storage, direct: { enabled: false } } })
    assert.equal('uploadDirectUrl' in off.editor, false)
  })
})

describe('with local storage', () => {
  test('the signing routes are not served and the config answer names no uploadDirectUrl', async (t) => {
    const srv = await startTestServer(t)
    const config = (await (await fetch(srv.action('config'))).json()) as Record<string, unknown>
    assert.equal('uploadDirectUrl' in config, false)
    const res = await fetch(`${srv.url}/s3/s3/params?filename=a.png&type=image%2Fpng`)
    assert.equal(res.status, 404)
  })
})

/**
 * One file uploaded by Uppy in the page: fetched from the site, added with its category (and its
 * size, as docs/uploads.md says) in the meta, and sent by `@uppy/aws-s3` with the query token in
 * `companionEndpoint`'s path.
 */
async function uppyUpload(
  page: Page,
  o: {
    endpoint: string
    token: string
    file: string
    name: string
    type: string
    category: string
    multipart: boolean
  },
) {
  return page.evaluate(async (o) => {
    interface UppyLike {
      use(plugin: unknown, options: object): UppyLike
      on(event: string, fn: (...args: unknown[]) => void): void
      setFileMeta(id: string, meta: object): void
      addFile(f: object): string
      upload(): Promise<{
        successful?: { response?: { body?: unknown } }[]
        failed?: { error?: string }[]
      }>
    }
    const w = window as unknown as { Uppy: new (o: object) => UppyLike; AwsS3: unknown }
    const data = await (await fetch(o.file)).blob()
    const progress: number[] = []
    const uppy = new w.Uppy({ meta: { category: o.category } }).use(w.AwsS3, {
      companionEndpoint: `${o.endpoint}/token=${encodeURIComponent(o.token)}`,
      shouldUseMultipart: o.multipart,
      getChunkSize: () => 5 * 1024 * 1024,
    })
    uppy.on('upload-progress', (_file, p) => {
      progress.push((p as { bytesUploaded: number }).bytesUploaded)
    })
    const id = uppy.addFile({ name: o.name, type: o.type, data })
    uppy.setFileMeta(id, { size: data.size })
    const result = await uppy.upload()
    return {
      body: result.successful?.[0]?.response?.body as { location: string; key: string },
      failed: result.failed?.map((f) => String(f.error)) ?? [],
      progress: progress.length,
    }
  }, o)
}

/** Uppy's core and S3 plugin as one script for the page, built from the installed packages. */
async function uppyBundle(): Promise<string> {
  const out = await build({
    stdin: {
      contents:
        "import Uppy from '@uppy/core'\nimport AwsS3 from '@uppy/aws-s3'\nwindow.Uppy = Uppy\nwindow.AwsS3 = AwsS3\n",
      resolveDir: fileURLToPath(new URL('../../../', import.meta.url)),
      loader: 'js',
    },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  })
  return out.outputFiles[0]?.text ?? ''
}
