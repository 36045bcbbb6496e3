import assert from 'node:assert/strict'
import { request } from 'node:http'
import { createAdmission } from '../../src/admission/admit.js'
import type { ServerConfigInput } from '../../src/config/schema.js'
import { createTusRoute } from '../../src/uploads/tus/route.js'
import { tusPlace } from '../../src/uploads/tus/stores.js'
import { ALICE, BOB, bearer, ROOT, TOKENS } from '../helpers/auth.js'
import { eventually } from '../helpers/eventually.js'
import { PDF } from '../helpers/fixtures.js'
import { type RunningS3rver, startS3rver } from '../helpers/s3rver.js'
import { metric, startTestServer, type TestServer } from '../helpers/start-server.js'
import { after, before, describe, type TestContext, test } from '../helpers/test.js'
import { tusFetch, tusMetadata } from '../helpers/tus.js'
import { secondNode } from '../helpers/upload-node.js'

let s3: RunningS3rver
before(async () => {
  s3 = await startS3rver()
})
after(async () => {
  await s3.close()
})

/** The three ways in that take a file's bytes or its declaration before them. */
type Way = 'multipart' | 'tus' | 'direct'
const WAYS: readonly Way[] = ['multipart', 'tus', 'direct']

interface Upload {
  name: string
  category: string
  size: number
  token?: string
}

/** A server storing in a fresh bucket, so that multipart, tus and direct uploads are all served. */
async function startServer(t: TestContext, config: ServerConfigInput = {}): Promise<TestServer> {
  const bucket = await s3.createBucket()
  return startTestServer(t, {
    auth: { tokens: TOKENS, queryParam: 'token' },
    images: { enabled: false },
    ...config,
    storage: s3.storageConfig(bucket),
  })
}

/** `size` bytes of a PDF. */
function pdfOf(size: number): Buffer {
  return size <= PDF.length
    ? PDF.subarray(0, size)
    : Buffer.concat([PDF, Buffer.alloc(size - PDF.length, 32)])
}

/** Sends the upload one way; answers the refusal's code, or undefined when it was accepted. */
async function send(srv: TestServer, way: Way, u: Upload): Promise<string | undefined> {
  const token = u.token ?? ALICE
  if (way === 'multipart') {
    const form = new FormData()
    form.append('file', new Blob([new Uint8Array(pdfOf(u.size))]), u.name)
    const res = await fetch(srv.action(u.category), {
      method: 'POST',
      body: form,
      headers: bearer(token),
    })
    const body = (await res.json()) as { state: string; code?: string }
    return body.state === 'SUCCESS' ? undefined : body.code
  }
  if (way === 'tus') {
    const answer = await tusFetch(`${srv.url}${srv.ue.config.routes.tus}`, {
      method: 'POST',
      headers: {
        ...bearer(token),
        'Upload-Length': String(u.size),
        'Upload-Metadata': tusMetadata({ filename: u.name, category: u.category }),
      },
    })
    return answer.status === 201 ? undefined : answer.json().error?.code
  }
  const q = new URLSearchParams({
    filename: u.name,
    'metadata[category]': u.category,
    'metadata[size]': String(u.size),
    token,
  })
  // Uppy adds `/s3` to the endpoint the config answer names (`routes.s3`).
  const res = await fetch(`${srv.url}${srv.ue.config.routes.s3}/s3/params?${q}`)
  const body = (await res.json()) as { error?: { code: string } }
  return res.status === 200 ? undefined : body.error?.code
}

/**
 * A multipart upload that sends its first bytes and then nothing: it holds an upload slot until
 * `release()` drops its connection.
 */
async function heldUpload(srv: TestServer): Promise<{ release(): void }> {
  const boundary = 'held-upload'
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n`
  const req = request(srv.action('file'), {
    method: 'POST',
    headers: {
      ...bearer(ALICE),
      'Content-Type': `multipart/form-data; boundary=${boundary}`,
      'Content-Length': String(1_000_000),
    },
  })
  req.on('error', () => {})
  req.write(head)
  req.write(PDF)
  await eventually(() => metric(srv, 'ueditor_uploads_in_flight'), {
    until: (n) => n === 1,
    what: 'the held upload in flight',
  })
  return { release: () => req.destroy() }
}

describe('one admission for every way of uploading', () => {
  test('the same refused upload gets the same code through multipart, tus and direct', async (t) => {
    const cases: {
      what: string
      config?: ServerConfigInput
      upload: Upload
      ways?: readonly Way[]
      code: string
    }[] = [
      {
        what: 'an extension its category does not allow',
        upload: { name: 'shell.php', category: 'file', size: 100 },
        code: 'UE_TYPE_NOT_ALLOWED',
      },
      {
        what: 'a category no upload stores',
        upload: { name: 'a.pdf', category: 'spreadsheet', size: 100 },
        // A multipart upload names its category by its action: an unknown one is no upload.
        ways: ['tus', 'direct'],
        code: 'UE_VALIDATION_FAILED',
      },
      {
        what: 'a size over its category’s limit',
        config: { editor: { fileMaxSize: 1000 } },
        upload: { name: 'a.pdf', category: 'file', size: 2000 },
        code: 'UE_FILE_TOO_LARGE',
      },
      {
        what: 'an empty file',
        upload: { name: 'a.pdf', category: 'file', size: 0 },
        code: 'UE_FILE_EMPTY',
      },
      {
        what: 'a size over the quota',
        config: { limits: { quotaBytes: 1000 } },
        upload: { name: 'a.pdf', category: 'file', size: 2000 },
        code: 'UE_QUOTA_EXCEEDED',
      },
    ]
    for (const c of cases) {
      const srv = await startServer(t, c.config)
      for (const way of c.ways ?? WAYS)
        assert.equal(await send(srv, way, c.upload), c.code, `${c.what}, ${way}`)
    }
  })

  test('past the per-minute rate, every way is refused with UE_RATE_LIMITED', async (t) => {
    const srv = await startServer(t, { limits: { uploadsPerMinute: 1 } })
    // One user each way: each has its one upload of the minute, then none.
    const users: Record<Way, string> = { multipart: ALICE, tus: BOB, direct: ROOT }
    for (const way of WAYS) {
      const upload = { name: 'a.pdf', category: 'file', size: 1000, token: users[way] }
      assert.equal(await send(srv, way, upload), undefined, `the first, ${way}`)
      assert.equal(await send(srv, way, upload), 'UE_RATE_LIMITED', `the second, ${way}`)
    }
  })

  test('past the concurrent uploads, every way is refused with UE_RATE_LIMITED', async (t) => {
    const srv = await startServer(t, { limits: { concurrentUploads: 1, uploadQueue: 0 } })
    const upload = { name: 'a.pdf', category: 'file', size: 1000 }
    // Bytes that pass through the server hold a slot while they arrive.
    const held = await heldUpload(srv)
    try {
      assert.equal(await send(srv, 'multipart', upload), 'UE_RATE_LIMITED')
      assert.equal(await send(srv, 'tus', upload), 'UE_RATE_LIMITED')
    } finally {
      held.release()
    }
    // Bytes that go straight to the bucket hold their place by their open upload.
    assert.equal(await send(srv, 'direct', upload), undefined)
    assert.equal(await send(srv, 'direct', upload), 'UE_RATE_LIMITED')
  })

  test('a resumable upload counts the quota once when it is created and once when it is settled', async (t) => {
    const srv = await startTestServer(t, {
      auth: { tokens: TOKENS },
      limits: { quotaBytes: 10_000_000 },
    })
    const deps = await secondNode(t, srv.ue.config)
    // The index's usage sum is what a quota check reads.
    let counted = 0
    const usage = deps.files.usage.bind(deps.files)
    const files = Object.create(deps.files) as typeof deps.files
    files.usage = (owner) => {
      counted++
      return usage(owner)
    }
    const spied = { ...deps, files }
    spied.admission = createAdmission({
      config: deps.config,
      files,
      uploads: deps.uploads,
      gate: { admit: async () => () => {} },
    })
    const place = await tusPlace(deps.config, deps.storage, deps.log)
    const route = createTusRoute({ deps: spied, place, path: '/tus' })
    const bytes = pdfOf(5000)
    const created = await route.handler(
      new Request(`${srv.url}/tus`, {
        method: 'POST',
        headers: {
          ...bearer(ALICE),
          'Tus-Resumable': '1.0.0',
          'Upload-Length': String(bytes.length),
          'Upload-Metadata': tusMetadata({ filename: 'a.pdf', category: 'file' }),
          'Content-Type': 'application/offset+octet-stream',
        },
        body: new Uint8Array(bytes),
      }),
    )
    const answer = (await created.json()) as { state?: string }
    assert.equal(created.status, 201)
    assert.equal(answer.state, 'SUCCESS', JSON.stringify(answer))
    assert.equal(counted, 2)
    assert.equal(await deps.uploads.reserved('alice'), 0)
  })
})
