import assert from 'node:assert/strict'
import { tmpdir } from 'node:os'
import { clientKey } from '../../src/limits/client-key.js'
import { sharedFreeBytes } from '../../src/shared/free-space.js'
import { eventually } from '../helpers/eventually.js'
import { png } from '../helpers/fixtures.js'
import {
  assertStillServes,
  expectRefused,
  firstJsonBody,
  postBody,
  rawExchange,
} from '../helpers/hostile.js'
import { multipartBody } from '../helpers/multipart.js'
import { uploadFrom } from '../helpers/post-from.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'

function imageUpload(srv: TestServer, scrawl = false) {
  if (scrawl)
    return postBody(
      srv,
      'scrawl',
      `upfile=${encodeURIComponent(png().toString('base64'))}`,
      'application/x-www-form-urlencoded',
    )
  const { body, contentType } = multipartBody([{ name: 'upfile', filename: 'a.png', value: png() }])
  return postBody(srv, 'image', body, contentType)
}

function pngFrom(srv: TestServer, localAddress: string) {
  return uploadFrom(srv, localAddress, [{ name: 'upfile', filename: 'a.png', value: png() }])
}

describe('S14: upload floods and disk exhaustion', () => {
  test('past limits.uploadsPerMinute a client is refused until its bucket refills', async (t) => {
    const srv = await startTestServer(t, { limits: { uploadsPerMinute: 3 } })
    for (let i = 0; i < 3; i++)
      assert.equal((await (await imageUpload(srv, i === 2)).json()).state, 'SUCCESS')
    const stored = (await srv.storedFiles()).length
    await expectRefused(srv, () => imageUpload(srv), { codes: ['UE_RATE_LIMITED'] })
    await expectRefused(srv, () => imageUpload(srv, true), { codes: ['UE_RATE_LIMITED'] })
    assert.equal((await srv.storedFiles()).length, stored)
    // Reads are not uploads: listings and config still answer.
    assert.equal((await (await fetch(srv.action('listImage'))).json()).total, 3)
    const other = await pngFrom(srv, '127.0.0.2')
    assert.equal(other.state, 'SUCCESS', JSON.stringify(other))
  })

  test('a refused flood gets HTTP 429 with errorStatus http', async (t) => {
    const srv = await startTestServer(t, {
      limits: { uploadsPerMinute: 1 },
      http: { errorStatus: 'http' },
    })
    assert.equal((await imageUpload(srv)).status, 200)
    const refusal = await expectRefused(srv, () => imageUpload(srv), { codes: ['UE_RATE_LIMITED'] })
    assert.notEqual(refusal, 'closed')
    if (refusal !== 'closed') assert.equal(refusal.status, 429)
  })

  test('past limits.concurrentUploads and a full queue a client is refused until one of its uploads ends', async (t) => {
    const srv = await startTestServer(t, { limits: { concurrentUploads: 1, uploadQueue: 0 } })
    const { body, contentType } = multipartBody([
      { name: 'upfile', filename: 'slow.png', value: png(50, 50, { noise: true }) },
    ])
    const head = `POST /ueditor?action=image HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n\r\n`
    // Holds one upload open: headers and half the body, then the rest after a while.
    const slow = rawExchange(
      srv,
      [Buffer.concat([Buffer.from(head), body.subarray(0, 1000)]), body.subarray(1000)],
      { gapMs: 3_000, maxMs: 10_000 },
    )
    const refused = await eventually(
      async () => (await (await imageUpload(srv)).json()).code as string | undefined,
      { until: (code) => code === 'UE_RATE_LIMITED', what: 'an upload refused UE_RATE_LIMITED' },
    )
    assert.equal(refused, 'UE_RATE_LIMITED')
    const finished = await slow
    assert.equal(firstJsonBody(finished.text)?.state, 'SUCCESS')
    assert.equal((await (await imageUpload(srv)).json()).state, 'SUCCESS')
    await assertStillServes(srv)
  })

  test('uploads are refused while the storage volume is below limits.minFreeBytes', async (t) => {
    const srv = await startTestServer(t, { limits: { minFreeBytes: Number.MAX_SAFE_INTEGER } })
    await expectRefused(srv, () => imageUpload(srv), { codes: ['UE_STORAGE_FULL'] })
    await expectRefused(srv, () => imageUpload(srv, true), { codes: ['UE_STORAGE_FULL'] })
    const http = await startTestServer(t, {
      limits: { minFreeBytes: Number.MAX_SAFE_INTEGER },
      http: { errorStatus: 'http' },
    })
    const res = await imageUpload(http)
    assert.equal(res.status, 507)
    assert.equal((await res.json()).code, 'UE_STORAGE_FULL')
    assert.deepEqual(await http.storedFiles(), [])
  })

  test('uploads that arrive together are each refused while the volume is below the floor, and later ones are checked again', async (t) => {
    const srv = await startTestServer(t, { limits: { minFreeBytes: Number.MAX_SAFE_INTEGER } })
    const answers = await Promise.all(Array.from({ length: 6 }, () => imageUpload(srv)))
    for (const res of answers) assert.equal((await res.json()).code, 'UE_STORAGE_FULL')
    await expectRefused(srv, () => imageUpload(srv), { codes: ['UE_STORAGE_FULL'] })
    assert.deepEqual(await srv.storedFiles(), [])
  })

  test('admissions asking for free space while a look-up is under way share it, and the next asks anew', async () => {
    const free = sharedFreeBytes(tmpdir())
    const first = free()
    assert.equal(free(), first)
    assert.ok((await first) > 0)
    const next = free()
    assert.notEqual(next, first)
    assert.ok((await next) > 0)
  })

  test('IPv6 clients share one bucket per /64, IPv4-mapped addresses count as IPv4', () => {
    assert.equal(clientKey('2001:db8:1:2:aaaa::1'), clientKey('2001:db8:1:2:bbbb::9'))
    assert.notEqual(clientKey('2001:db8:1:2::1'), clientKey('2001:db8:1:3::1'))
    assert.equal(clientKey('::ffff:127.0.0.1'), '127.0.0.1')
    assert.equal(clientKey('not an address'), 'not an address')
  })
})
