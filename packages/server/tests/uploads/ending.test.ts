import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { buffer } from 'node:stream/consumers'
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3'
import type { ServerConfigInput } from '../../src/config/schema.js'
import type { StorageKey } from '../../src/shared/types.js'
import { claimAndFinish } from '../../src/uploads/finish.js'
import { ALICE, BOB, TOKENS } from '../helpers/auth.js'
import { blob, MP4, PDF, png } from '../helpers/fixtures.js'
import { startS3rver } from '../helpers/s3rver.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { tempDir } from '../helpers/temp-dir.js'
import { after, describe, type TestContext, test } from '../helpers/test.js'
import { newUpload, secondNode } from '../helpers/upload-node.js'

const AUTH = { auth: { tokens: TOKENS } } satisfies ServerConfigInput
const PHP = Buffer.from('<?php system($_GET["c"]); ?>\n')

/** `?action=uploadresult&id=` as `token`'s user asks it. */
async function resultOf(srv: TestServer, id: string, token = ALICE) {
  const res = await fetch(srv.action('uploadresult', `&id=${encodeURIComponent(id)}`), {
    headers: { Authorization: `Bearer ${token}` },
  })
  assert.equal(res.status, 200)
  return res.json()
}

/** Bytes of a video long enough to be more than the sniffed head. */
function video(size = 200_000): Buffer {
  const out = Buffer.alloc(size, 7)
  MP4.copy(out)
  return out
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex')

async function finishedFile(t: TestContext, bytes: Buffer): Promise<string> {
  const dir = await tempDir(t, 'ue-finished-')
  const path = join(dir, 'finished')
  await writeFile(path, bytes)
  return path
}

describe('the one ending of resumable and direct uploads, on disk', () => {
  test('a finished video is stored under a server key, its bytes removed, and only its owner reads the result', async (t) => {
    const srv = await startTestServer(t, AUTH)
    const node = await secondNode(t, srv.ue.config)
    const bytes = video()
    const row = await node.uploads.create(newUpload({ size: bytes.length }))

    const pending = await resultOf(srv, row.id)
    assert.equal(pending.code, 'UE_UPLOAD_PENDING')
    assert.equal(typeof pending.state, 'string')

    const path = await finishedFile(t, bytes)
    const outcome = await claimAndFinish(node, row, { kind: 'file', path })
    assert.ok(outcome && 'state' in outcome, JSON.stringify(outcome))
    assert.equal(outcome.state, 'SUCCESS')
    assert.equal(outcome.type, '.mp4')
    assert.equal(outcome.size, bytes.length)
    assert.equal(outcome.original, 'clip.mp4')
    assert.equal(existsSync(path), false, 'the unfinished bytes are removed')
    const key = outcome.url.slice('/uploads/'.length)
    assert.equal(sha(await readFile(join(srv.storageRoot(), key))), sha(bytes))
    assert.equal((await node.files.get(key as StorageKey))?.owner, 'alice')

    assert.deepEqual(await resultOf(srv, row.id), outcome)
    const unknown = await resultOf(srv, 'no-such-upload-000000000', BOB)
    assert.deepEqual(await resultOf(srv, row.id, BOB), unknown)
    assert.equal(unknown.code, 'UE_NOT_FOUND')
    // The served file is the stored one.
    const served = await fetch(`${srv.url}${outcome.url}`)
    assert.equal(sha(Buffer.from(await served.arrayBuffer())), sha(bytes))
  })

  test('only one of two claims runs the ending; the other gets null', async (t) => {
    const srv = await startTestServer(t, AUTH)
    const node = await secondNode(t, srv.ue.config)
    const bytes = video(5_000)
    const row = await node.uploads.create(newUpload({ size: bytes.length }))
    const path = await finishedFile(t, bytes)
    const outcomes = await Promise.all([
      claimAndFinish(node, row, { kind: 'file', path }),
      claimAndFinish(node, row, { kind: 'file', path }),
    ])
    assert.equal(outcomes.filter((o) => o === null).length, 1)
    assert.equal((await srv.storedFiles()).length, 1)
  })

  test('a PHP script declared as an image is refused, nothing stays, and the result says why', async (t) => {
    const srv = await startTestServer(t, AUTH)
    const node = await secondNode(t, srv.ue.config)
    const row = await node.uploads.create(
      newUpload({ category: 'image', originalName: 'avatar.png', size: PHP.length }),
    )
    const path = await finishedFile(t, PHP)
    const outcome = await claimAndFinish(node, row, { kind: 'file', path })
    assert.ok(outcome && 'code' in outcome)
    assert.equal(outcome.code, 'UE_CONTENT_MISMATCH')
    assert.equal(existsSync(path), false)
    assert.deepEqual(await srv.storedFiles(), [])
    const answer = await resultOf(srv, row.id)
    assert.equal(answer.code, 'UE_CONTENT_MISMATCH')
    assert.notEqual(answer.state, 'SUCCESS')
    assert.equal((await node.uploads.get(row.id))?.state, 'refused')
  })

  test('a file over its category’s limit or larger than declared is refused and removed', async (t) => {
    const srv = await startTestServer(t, { ...AUTH, editor: { fileMaxSize: 1_000 } })
    const node = await secondNode(t, srv.ue.config)
    const big = Buffer.concat([PDF, Buffer.alloc(2_000, 32)])
    const over = await node.uploads.create(
      newUpload({ category: 'file', originalName: 'a.pdf', size: big.length }),
    )
    const a = await claimAndFinish(node, over, { kind: 'file', path: await finishedFile(t, big) })
    assert.deepEqual(a && 'code' in a && a.code, 'UE_FILE_TOO_LARGE')
    const lying = await node.uploads.create(
      newUpload({ category: 'file', originalName: 'b.pdf', size: 10 }),
    )
    const b = await claimAndFinish(node, lying, { kind: 'file', path: await finishedFile(t, PDF) })
    assert.deepEqual(b && 'code' in b && b.code, 'UE_FILE_TOO_LARGE')
    assert.deepEqual(await srv.storedFiles(), [])
  })

  test('unsettled uploads count against the quota, and an ending past it is refused', async (t) => {
    const srv = await startTestServer(t, { ...AUTH, limits: { quotaBytes: 300_000 } })
    const node = await secondNode(t, srv.ue.config)
    const reserved = await node.uploads.create(newUpload({ size: 250_000 }))
    // A multipart upload of 60 kB does not fit next to the 250 kB on their way.
    const form = new FormData()
    form.append('file', blob(Buffer.concat([PDF, Buffer.alloc(60_000, 32)])), 'c.pdf')
    const posted = await fetch(srv.action('file'), {
      method: 'POST',
      body: form,
      headers: { Authorization: `Bearer ${ALICE}` },
    })
    assert.equal((await posted.json()).code, 'UE_QUOTA_EXCEEDED')
    // Its own reservation is replaced by what it stores: 200 kB fits, beside nothing else.
    const bytes = video()
    const ok = await claimAndFinish(node, reserved, {
      kind: 'file',
      path: await finishedFile(t, bytes),
    })
    assert.ok(ok && 'state' in ok, JSON.stringify(ok))
    assert.equal(await node.uploads.reserved('alice'), 0)
    const next = await node.uploads.create(newUpload({ size: bytes.length }))
    const refused = await claimAndFinish(node, next, {
      kind: 'file',
      path: await finishedFile(t, bytes),
    })
    assert.deepEqual(refused && 'code' in refused && refused.code, 'UE_QUOTA_EXCEEDED')
    assert.equal((await srv.storedFiles()).length, 1)
  })

  test('an image goes through the image pipeline, as a multipart image does', async (t) => {
    const srv = await startTestServer(t, AUTH)
    const node = await secondNode(t, srv.ue.config)
    const image = png(40, 30, { noise: true })
    const row = await node.uploads.create(
      newUpload({ category: 'image', originalName: 'photo.png', size: image.length }),
    )
    const outcome = await claimAndFinish(node, row, {
      kind: 'file',
      path: await finishedFile(t, image),
    })
    assert.ok(outcome && 'state' in outcome, JSON.stringify(outcome))
    assert.equal(outcome.type, '.png')
    assert.equal((await srv.storedFiles()).length, 1)
    assert.deepEqual(await srv.tempFiles(), [])
  })
})

describe('the one ending of resumable and direct uploads, on S3', async () => {
  const s3 = await startS3rver()
  after(() => s3.close())

  async function s3Server(t: TestContext) {
    const bucket = await s3.createBucket()
    const srv = await startTestServer(t, {
      ...AUTH,
      storage: s3.storageConfig(bucket),
    })
    const keys = async () =>
      ((await s3.client.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map(
        (o) => o.Key,
      )
    const read = async (key: string) =>
      buffer(
        (await s3.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body as Readable,
      )
    return { srv, node: await secondNode(t, srv.ue.config), keys, read }
  }

  async function pending(node: Awaited<ReturnType<typeof s3Server>>['node'], bytes: Buffer) {
    const key = `pending-test/${Date.now()}-${Math.random().toString(36).slice(2)}` as StorageKey
    await node.storage.put(key, Readable.from([bytes]), {
      size: bytes.length,
      contentType: 'application/octet-stream',
    })
    return key
  }

  test('a finished object is moved by a server-side copy and the pending object is deleted', async (t) => {
    const { srv, node, keys, read } = await s3Server(t)
    const bytes = video(300_000)
    const key = await pending(node, bytes)
    const row = await node.uploads.create(newUpload({ via: 'direct', size: bytes.length }))
    const outcome = await claimAndFinish(node, row, { kind: 'object', key })
    assert.ok(outcome && 'state' in outcome, JSON.stringify(outcome))
    const stored = outcome.url.slice('/uploads/'.length)
    assert.deepEqual(await keys(), [stored])
    assert.equal(sha(await read(stored)), sha(bytes))
    assert.deepEqual(await resultOf(srv, row.id), outcome)
  })

  test('an image object is downloaded, re-encoded and stored; a disguised script is refused and deleted', async (t) => {
    const { node, keys } = await s3Server(t)
    const image = png(20, 20, { noise: true })
    const row = await node.uploads.create(
      newUpload({ via: 'direct', category: 'image', originalName: 'a.png', size: image.length }),
    )
    const outcome = await claimAndFinish(node, row, {
      kind: 'object',
      key: await pending(node, image),
    })
    assert.ok(outcome && 'state' in outcome, JSON.stringify(outcome))
    assert.equal((await keys()).length, 1)

    const php = await node.uploads.create(
      newUpload({ via: 'direct', category: 'image', originalName: 'b.png', size: PHP.length }),
    )
    const refused = await claimAndFinish(node, php, {
      kind: 'object',
      key: await pending(node, PHP),
    })
    assert.deepEqual(refused && 'code' in refused && refused.code, 'UE_CONTENT_MISMATCH')
    assert.deepEqual(await keys(), [outcome.url.slice('/uploads/'.length)])
  })
})
