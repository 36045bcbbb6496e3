import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { GetObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3'
import type { StorageKey } from '../../src/shared/types.js'
import { type DirectBucket, s3DirectBucket } from '../../src/storage/s3-direct.js'
import { type RunningS3rver, S3RVER_CREDENTIALS, startS3rver } from '../helpers/s3rver.js'
import { after, before, describe, test } from '../helpers/test.js'

const MB = 1024 * 1024
let s3: RunningS3rver
before(async () => {
  s3 = await startS3rver()
})
after(() => s3.close())

async function openBucket(t: { after(fn: () => Promise<void>): void }) {
  const name = await s3.createBucket()
  const bucket = s3DirectBucket({
    bucket: name,
    region: 'us-east-1',
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: { ...S3RVER_CREDENTIALS },
    prefix: 'app/',
  })
  t.after(() => bucket.close())
  return { name, bucket }
}

async function objectBytes(bucket: string, key: string): Promise<Buffer> {
  const out = await s3.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))
  return Buffer.from(
    await (out.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray(),
  )
}

const head = (bucket: string, key: string) =>
  s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))

const key = (k: string) => k as StorageKey

async function putPart(b: DirectBucket, k: StorageKey, uploadId: string, n: number, bytes: Buffer) {
  const url = await b.signPart(k, uploadId, n, 60)
  const res = await fetch(url, { method: 'PUT', body: new Uint8Array(bytes) })
  assert.equal(res.status, 200, await res.clone().text())
  return { PartNumber: n, ETag: res.headers.get('etag') as string }
}

describe('the bucket of direct uploads (moto)', () => {
  test('a signed POST stores the file under the key it names, below the storage prefix, as an attachment', async (t) => {
    const { name, bucket } = await openBucket(t)
    const signed = await bucket.signPost(key('pending/abc'), {
      contentType: 'text/plain',
      maxBytes: 100,
      expiresSeconds: 60,
    })
    assert.equal(signed.fields.key, 'app/pending/abc')
    assert.equal(signed.fields['Content-Type'], 'text/plain')
    const form = new FormData()
    for (const [n, v] of Object.entries(signed.fields)) form.append(n, v)
    form.append('file', new Blob(['hello']), 'x.txt')
    const res = await fetch(signed.url, { method: 'POST', body: form })
    assert.ok(res.status < 300, String(res.status))
    assert.equal((await objectBytes(name, 'app/pending/abc')).toString(), 'hello')
    assert.equal((await head(name, 'app/pending/abc')).ContentDisposition, 'attachment')
  })

  test('a multipart upload is signed part by part, listed, completed with the same bytes, as an attachment', async (t) => {
    const { name, bucket } = await openBucket(t)
    const k = key('pending/multi')
    const uploadId = await bucket.createMultipart(k, 'application/pdf')
    const bytes = randomBytes(5 * MB + 1234)
    const parts = [
      await putPart(bucket, k, uploadId, 1, bytes.subarray(0, 5 * MB)),
      await putPart(bucket, k, uploadId, 2, bytes.subarray(5 * MB)),
    ]
    assert.deepEqual(
      (await bucket.listParts(k, uploadId)).map((p) => [p.PartNumber, p.Size]),
      [
        [1, 5 * MB],
        [2, 1234],
      ],
    )
    const open = []
    for await (const u of bucket.openMultiparts('pending/')) open.push(u)
    assert.deepEqual(
      open.map((u) => [u.key, u.uploadId]),
      [[k, uploadId]],
    )
    await bucket.complete(k, uploadId, parts)
    assert.ok((await objectBytes(name, 'app/pending/multi')).equals(bytes))
    const assembled = await head(name, 'app/pending/multi')
    assert.equal(assembled.ContentType, 'application/pdf')
    assert.equal(assembled.ContentDisposition, 'attachment')
  })

  test('an aborted upload is gone with its parts; aborting again, or listing it, says so calmly', async (t) => {
    const { bucket } = await openBucket(t)
    const k = key('pending/gone')
    const uploadId = await bucket.createMultipart(k, 'application/pdf')
    await putPart(bucket, k, uploadId, 1, randomBytes(1000))
    await bucket.abort(k, uploadId)
    await bucket.abort(k, uploadId)
    await assert.rejects(bucket.listParts(k, uploadId), { code: 'UE_NOT_FOUND' })
    const open = []
    for await (const u of bucket.openMultiparts('pending/')) open.push(u)
    assert.deepEqual(open, [])
  })

  test('an upload id is bound to its key: listing it under another key is not found', async (t) => {
    const { bucket } = await openBucket(t)
    const uploadId = await bucket.createMultipart(key('pending/one'), 'application/pdf')
    await assert.rejects(bucket.listParts(key('pending/two'), uploadId), { code: 'UE_NOT_FOUND' })
  })
})
