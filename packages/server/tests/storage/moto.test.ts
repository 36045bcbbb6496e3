import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { connect } from 'node:net'
import { promisify } from 'node:util'
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3'
import { createPresignedPost } from '@aws-sdk/s3-presigned-post'
import { eventually } from '../helpers/eventually.js'
import { startMoto } from '../helpers/moto.js'
import { type RunningS3, startS3 } from '../helpers/s3rver.js'
import { after, before, describe, test } from '../helpers/test.js'

const run = promisify(execFile)
const MB = 1024 * 1024

/** The S3 error code a call failed with, or 'ok'. */
async function outcome(call: Promise<unknown>): Promise<string> {
  try {
    await call
    return 'ok'
  } catch (e) {
    return (e as { name?: string }).name ?? String(e)
  }
}

async function text(s3: RunningS3, bucket: string, key: string): Promise<string> {
  const out = await s3.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))
  return (out.Body as { transformToString(): Promise<string> }).transformToString()
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

/** Resolves once nothing listens on `port` any more. */
async function refused(port: number, what: string): Promise<void> {
  await eventually(async () => !(await listening(port)), {
    timeoutMs: 10_000,
    intervalMs: 100,
    what,
  })
}

describe('the S3 server of the tests (moto behind its proxy)', () => {
  let s3: RunningS3
  before(async () => {
    s3 = await startS3()
  })
  after(() => s3.close())

  test('a multipart upload is listed, its parts listed, completed or aborted as on S3; an upload id answers only for its own key', async () => {
    const Bucket = await s3.createBucket()
    const send = s3.client.send.bind(s3.client)
    const Key = 'pending/one'
    const { UploadId } = await send(new CreateMultipartUploadCommand({ Bucket, Key }))
    const part = (n: number, body: Buffer, key = Key, id = UploadId) =>
      send(new UploadPartCommand({ Bucket, Key: key, UploadId: id, PartNumber: n, Body: body }))
    const first = await part(1, Buffer.alloc(5 * MB, 1))
    const second = await part(2, Buffer.from('tail'))
    const listed = await send(new ListPartsCommand({ Bucket, Key, UploadId }))
    assert.deepEqual(
      listed.Parts?.map((p) => [p.PartNumber, p.Size]),
      [
        [1, 5 * MB],
        [2, 4],
      ],
    )
    const open = await send(new ListMultipartUploadsCommand({ Bucket, Prefix: 'pending/' }))
    assert.deepEqual(
      open.Uploads?.map((u) => [u.Key, u.UploadId]),
      [[Key, UploadId]],
    )

    // Another key, or an id that is no upload: NoSuchUpload, and the upload is untouched.
    assert.equal(await outcome(part(1, Buffer.from('x'), 'pending/two')), 'NoSuchUpload')
    assert.equal(await outcome(part(1, Buffer.from('x'), Key, 'no-such-id')), 'NoSuchUpload')
    const other = { Bucket, Key: 'pending/two', UploadId }
    assert.equal(await outcome(send(new ListPartsCommand(other))), 'NoSuchUpload')
    assert.equal(await outcome(send(new AbortMultipartUploadCommand(other))), 'NoSuchUpload')
    const parts = [
      { PartNumber: 1, ETag: first.ETag },
      { PartNumber: 2, ETag: second.ETag },
    ]
    const complete = (o: { Key: string; UploadId: string | undefined }) =>
      send(new CompleteMultipartUploadCommand({ Bucket, ...o, MultipartUpload: { Parts: parts } }))
    assert.equal(await outcome(complete({ Key: 'pending/two', UploadId })), 'NoSuchUpload')
    assert.equal(await outcome(complete({ Key, UploadId: 'no-such-id' })), 'NoSuchUpload')

    await complete({ Key, UploadId })
    const head = await send(new HeadObjectCommand({ Bucket, Key }))
    assert.equal(head.ContentLength, 5 * MB + 4)
    assert.equal(
      await outcome(send(new ListPartsCommand({ Bucket, Key, UploadId }))),
      'NoSuchUpload',
    )

    const gone = await send(new CreateMultipartUploadCommand({ Bucket, Key: 'pending/gone' }))
    const aborted = { Bucket, Key: 'pending/gone', UploadId: gone.UploadId }
    await send(new AbortMultipartUploadCommand(aborted))
    assert.equal(await outcome(send(new ListPartsCommand(aborted))), 'NoSuchUpload')
    assert.equal(await outcome(send(new AbortMultipartUploadCommand(aborted))), 'NoSuchUpload')
    const left = await send(new ListMultipartUploadsCommand({ Bucket }))
    assert.deepEqual(left.Uploads ?? [], [])
  })

  test('a PUT or a copy with If-None-Match: * onto an existing key fails with 412 and keeps the first object', async () => {
    const Bucket = await s3.createBucket()
    const send = s3.client.send.bind(s3.client)
    await send(new PutObjectCommand({ Bucket, Key: 'a', Body: 'first' }))
    await send(new PutObjectCommand({ Bucket, Key: 'source', Body: 'source' }))
    const put = send(new PutObjectCommand({ Bucket, Key: 'a', Body: 'second', IfNoneMatch: '*' }))
    assert.equal(await outcome(put), 'PreconditionFailed')
    const copy = (Key: string) =>
      send(new CopyObjectCommand({ Bucket, Key, CopySource: `${Bucket}/source`, IfNoneMatch: '*' }))
    assert.equal(await outcome(copy('a')), 'PreconditionFailed')
    assert.equal(await text(s3, Bucket, 'a'), 'first')
    assert.equal(await outcome(copy('b')), 'ok')
    assert.equal(await text(s3, Bucket, 'b'), 'source')
  })

  test('a PUT whose connection ends before its Content-Length stores nothing', async () => {
    const Bucket = await s3.createBucket()
    const { port } = new URL(s3.endpoint)
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(
          `PUT /${Bucket}/cut HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: 100\r\n` +
            'Authorization: AWS4-HMAC-SHA256 Credential=k/20250101/us-east-1/s3/aws4_request, ' +
            'SignedHeaders=host, Signature=0\r\nx-amz-content-sha256: UNSIGNED-PAYLOAD\r\n\r\nhello',
          () => setTimeout(() => socket.destroy(), 200),
        )
      })
      socket.once('close', () => resolve())
      socket.once('error', reject)
    })
    await new Promise((r) => setTimeout(r, 300))
    const head = s3.client.send(new HeadObjectCommand({ Bucket, Key: 'cut' }))
    assert.equal(await outcome(head), 'NotFound')
  })

  test("a form POST from an origin of the bucket's CORS rule can read the answer; another origin cannot", async () => {
    const Bucket = await s3.createBucket()
    const page = 'http://127.0.0.1:1'
    await s3.allowOrigins(Bucket, [page])
    const preflight = await fetch(`${s3.endpoint}/${Bucket}`, {
      method: 'OPTIONS',
      headers: { origin: page, 'access-control-request-method': 'POST' },
    })
    assert.equal(preflight.status, 200)
    assert.equal(preflight.headers.get('access-control-allow-origin'), page)
    const post = async (origin: string) => {
      const { url, fields } = await createPresignedPost(s3.client, { Bucket, Key: 'posted' })
      const form = new FormData()
      for (const [name, value] of Object.entries(fields)) form.append(name, value)
      form.append('file', new Blob(['hello']), 'a.txt')
      const res = await fetch(url, { method: 'POST', body: form, headers: { origin } })
      await res.arrayBuffer()
      assert.ok(res.status < 300, String(res.status))
      return res.headers
    }
    const allowed = await post(page)
    assert.equal(allowed.get('access-control-allow-origin'), page)
    assert.equal(allowed.get('access-control-expose-headers'), 'ETag')
    assert.equal((await post('http://127.0.0.1:2')).get('access-control-allow-origin'), null)
    const refused = await fetch(`${s3.endpoint}/${Bucket}`, {
      method: 'OPTIONS',
      headers: { origin: 'http://127.0.0.1:2', 'access-control-request-method': 'POST' },
    })
    assert.equal(refused.status, 403)
    assert.equal(refused.headers.get('access-control-allow-origin'), null)
  })

  test('stop() refuses connections and restart() serves the same objects on the same port', async () => {
    const Bucket = await s3.createBucket()
    await s3.client.send(new PutObjectCommand({ Bucket, Key: 'kept', Body: 'kept' }))
    const port = Number(new URL(s3.endpoint).port)
    await s3.stop()
    assert.equal(await listening(port), false)
    await s3.restart()
    assert.equal(await text(s3, Bucket, 'kept'), 'kept')
  })
})

test('close() ends moto, and so does the end of a test process that never calls it', async () => {
  const moto = await startMoto()
  assert.ok(await listening(moto.port))
  await moto.close()
  await refused(moto.port, 'moto no longer listening after close()')

  const helper = new URL('../helpers/moto.js', import.meta.url).href
  const script = `const m = await (await import(${JSON.stringify(helper)})).startMoto(); console.log(m.port)`
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
    timeout: 60_000,
  })
  const port = Number(stdout.trim())
  assert.ok(port > 0, stdout)
  await refused(port, 'moto gone with the process that started it')
})
