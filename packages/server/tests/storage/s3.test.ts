import assert from 'node:assert/strict'
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3'
import { loadConfig } from '../../src/config/load.js'
import { isUeError } from '../../src/shared/errors.js'
import { s3Storage } from '../../src/storage/s3.js'
import { storageDriverContract } from '../contracts/storage-driver.contract.js'
import { blob, png } from '../helpers/fixtures.js'
import { type RunningS3rver, S3RVER_CREDENTIALS, startS3rver } from '../helpers/s3rver.js'
import { startTestServer } from '../helpers/start-server.js'
import { after, before, describe, test } from '../helpers/test.js'

storageDriverContract('s3 (moto)', async () => {
  const s3 = await startS3rver()
  const bucket = await s3.createBucket()
  return {
    driver: s3Storage({
      bucket,
      region: 'us-east-1',
      endpoint: s3.endpoint,
      forcePathStyle: true,
      credentials: S3RVER_CREDENTIALS,
      prefix: 'app',
    }),
    cleanup: () => s3.close(),
  }
})

describe('the server with S3 storage', () => {
  let s3: RunningS3rver
  before(async () => {
    s3 = await startS3rver()
  })
  after(() => s3.close())

  test('an uploaded image is stored as an object, listed and served back with ranges', async (t) => {
    const bucket = await s3.createBucket()
    const srv = await startTestServer(t, {
      storage: s3.storageConfig(bucket, 'site-a'),
    })

    const form = new FormData()
    form.append('upfile', blob(png(40, 30, { noise: true })), 'photo.png')
    const up = await (await fetch(srv.action('image'), { method: 'POST', body: form })).json()
    assert.equal(up.state, 'SUCCESS')
    assert.match(up.url, /^\/uploads\/image\/.+\.png$/)
    const key = (up.url as string).slice('/uploads/'.length)

    const listed = await s3.client.send(new ListObjectsV2Command({ Bucket: bucket }))
    assert.deepEqual(
      listed.Contents?.map((o) => o.Key),
      [`site-a/${key}`],
    )
    const object = await s3.client.send(
      new GetObjectCommand({ Bucket: bucket, Key: `site-a/${key}` }),
    )
    const stored = Buffer.from(
      await (object.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray(),
    )

    const served = await fetch(`${srv.url}${up.url}`)
    assert.equal(served.status, 200)
    assert.equal(served.headers.get('content-type'), 'image/png')
    assert.deepEqual(Buffer.from(await served.arrayBuffer()), stored)

    const ranged = await fetch(`${srv.url}${up.url}`, { headers: { Range: 'bytes=0-7' } })
    assert.equal(ranged.status, 206)
    assert.equal(ranged.headers.get('content-range'), `bytes 0-7/${stored.length}`)
    assert.deepEqual(Buffer.from(await ranged.arrayBuffer()), stored.subarray(0, 8))

    const list = await (await fetch(srv.action('listImage'))).json()
    assert.equal(list.total, 1)
    assert.equal(list.list[0].url, up.url)
  })
})

describe('S3 storage configuration', () => {
  test('the UEDITOR_S3_* variables select and configure the s3 driver', () => {
    const cfg = loadConfig({
      env: {
        UEDITOR_STORAGE: 's3',
        UEDITOR_S3_BUCKET: 'uploads',
        UEDITOR_S3_ENDPOINT: 'http://127.0.0.1:9000',
        UEDITOR_S3_FORCE_PATH_STYLE: 'true',
        UEDITOR_S3_ACCESS_KEY_ID: 'id',
        UEDITOR_S3_SECRET_ACCESS_KEY: 'very-secret-value',
        UEDITOR_S3_PREFIX: 'site-a/',
      },
    })
    assert.deepEqual(cfg.storage, {
      driver: 's3',
      bucket: 'uploads',
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:9000',
      forcePathStyle: true,
      accessKeyId: 'id',
      secretAccessKey: 'very-secret-value',
      prefix: 'site-a/',
    })
  })

  test('an invalid s3 config is refused without echoing the secret', () => {
    assert.throws(
      () =>
        loadConfig({
          env: {
            UEDITOR_STORAGE: 's3',
            UEDITOR_S3_BUCKET: 'ab',
            UEDITOR_S3_SECRET_ACCESS_KEY: 'very-secret-value',
          },
        }),
      (e: unknown) =>
        isUeError(e) &&
        e.code === 'UE_CONFIG_INVALID' &&
        e.message.includes('storage.bucket') &&
        e.message.includes('accessKeyId and secretAccessKey') &&
        !e.message.includes('very-secret-value'),
    )
  })
})
