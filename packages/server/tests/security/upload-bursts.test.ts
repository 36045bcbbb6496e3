import assert from 'node:assert/strict'
import { request } from 'node:http'
import { eventually } from '../helpers/eventually.js'
import { png } from '../helpers/fixtures.js'
import { firstJsonBody, rawExchange } from '../helpers/hostile.js'
import { multipartBody } from '../helpers/multipart.js'
import { metric, startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'

type Outcome =
  | { answer: { state?: string; code?: string } | null; status: number }
  | { failure: string }

/**
 * One upload on a connection of its own, the body sent whole with a `Content-Length`: the
 * answer, or the socket error (`EPIPE`, `ECONNRESET`) when the server closed before reading.
 */
function send(srv: TestServer, body: Buffer, contentType: string, action = 'image') {
  const url = new URL(srv.action(action))
  return new Promise<Outcome>((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        agent: false,
        headers: { 'Content-Type': contentType, 'Content-Length': body.length },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c) => chunks.push(c))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          resolve({ answer: text ? JSON.parse(text) : null, status: res.statusCode ?? 0 })
        })
        res.on('error', (e: NodeJS.ErrnoException) => resolve({ failure: e.code ?? e.message }))
      },
    )
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ failure: e.code ?? e.message }))
    req.end(body)
  })
}

function answerOf(o: Outcome) {
  assert.ok('answer' in o, `the connection failed: ${JSON.stringify(o)}`)
  return o.answer
}

function imageBody(bytes: Buffer = png(8, 8, { noise: true })) {
  return multipartBody([{ name: 'upfile', filename: 'photo.png', value: bytes }])
}

/** Holds one upload slot: headers and part of the body now, the rest after `holdMs`. */
function slowUpload(srv: TestServer, holdMs: number) {
  const { body, contentType } = imageBody(png(50, 50, { noise: true }))
  const { pathname, search } = new URL(srv.action('image'))
  const head = `POST ${pathname}${search} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n\r\n`
  return rawExchange(
    srv,
    [Buffer.concat([Buffer.from(head), body.subarray(0, 1000)]), body.subarray(1000)],
    { gapMs: holdMs, maxMs: holdMs + 20_000 },
  )
}

describe('S61: refusals the client can read, and bursts that are not refused', () => {
  test('200 concurrent 100 KB uploads from one address all get a readable answer, none a reset', async (t) => {
    const srv = await startTestServer(t)
    const { body, contentType } = imageBody(png(180, 180, { noise: true }))
    assert.ok(body.length > 95_000 && body.length < 105_000, `${body.length}`)
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, () => send(srv, body, contentType)),
    )
    const failures = outcomes.flatMap((o) => ('failure' in o ? [o.failure] : []))
    assert.deepEqual(failures, [], `connections failed: ${failures.join(', ')}`)
    const states = outcomes.map((o) => ('answer' in o ? o.answer : null))
    for (const answer of states) assert.equal(typeof answer?.state, 'string')
    const refused = states.filter((a) => a?.state !== 'SUCCESS')
    assert.ok(refused.length > 0, 'the flood was not limited at all')
    for (const answer of refused) assert.equal(answer?.code, 'UE_RATE_LIMITED')
    // At least 16 at once and 64 waiting are admitted; the others find the queue full.
    assert.ok(states.length - refused.length >= 80, `${refused.length} refused`)
    const limited =
      (await metric(srv, 'ueditor_upload_limit_refusals_total{limit="queue_full"}')) +
      (await metric(srv, 'ueditor_upload_limit_refusals_total{limit="per_minute"}'))
    assert.equal(limited, refused.length)
    assert.ok((await metric(srv, 'ueditor_upload_queue_total{outcome="admitted"}')) > 0)
    assert.equal(await metric(srv, 'ueditor_upload_queue_waiting'), 0)
  })

  test('uploads over their size limit but under http.drainMaxBytes are answered, not reset', async (t) => {
    const srv = await startTestServer(t, { editor: { imageMaxSize: 50_000 } })
    // Bigger than the socket buffers absorb: a server that stops reading would reset them.
    const { body, contentType } = imageBody(Buffer.concat([png(), Buffer.alloc(3_000_000, 7)]))
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () => send(srv, body, contentType)),
    )
    for (const outcome of outcomes) assert.equal(answerOf(outcome)?.code, 'UE_FILE_TOO_LARGE')
    assert.deepEqual(await srv.storedFiles(), [])
  })

  test('20 and then 40 images dropped at once are all stored with the default limits', async (t) => {
    const srv = await startTestServer(t)
    for (const count of [20, 40]) {
      const answers = await Promise.all(
        Array.from({ length: count }, async () => {
          const { body, contentType } = imageBody()
          const res = await fetch(srv.action('image'), {
            method: 'POST',
            body: new Uint8Array(body),
            headers: { 'Content-Type': contentType },
          })
          return (await res.json()) as { state: string; code?: string }
        }),
      )
      const refused = answers.filter((a) => a.state !== 'SUCCESS').map((a) => a.code)
      assert.deepEqual(refused, [], `${count} at once`)
    }
    assert.equal((await srv.storedFiles()).length, 60)
  })

  test('a queued upload whose client hangs up gives its place to the next one', async (t) => {
    const srv = await startTestServer(t, { limits: { concurrentUploads: 1, uploadQueue: 1 } })
    const holder = slowUpload(srv, 3_000)
    await eventually(() => metric(srv, 'ueditor_uploads_in_flight'), {
      until: (n) => n === 1,
      timeoutMs: 10_000,
      what: 'one upload in flight',
    })
    // The one queue place is taken, then given up by a client that goes away.
    const { body, contentType } = imageBody()
    const { pathname, search } = new URL(srv.action('image'))
    const gone = rawExchange(
      srv,
      [
        `POST ${pathname}${search} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n\r\n`,
        body,
      ],
      { maxMs: 1_000 },
    )
    await eventually(() => metric(srv, 'ueditor_upload_queue_waiting'), {
      until: (n) => n === 1,
      timeoutMs: 10_000,
      what: 'one upload waiting in the queue',
    })
    await gone
    assert.equal(
      await eventually(() => metric(srv, 'ueditor_upload_queue_total{outcome="gone"}'), {
        until: (n) => n === 1,
        timeoutMs: 10_000,
        what: 'the waiting upload counted as gone',
      }),
      1,
    )
    assert.equal(await metric(srv, 'ueditor_upload_queue_waiting'), 0)
    // Its place is free: the next upload waits for the slot instead of being refused.
    assert.equal(answerOf(await send(srv, body, contentType))?.state, 'SUCCESS')
    assert.equal(firstJsonBody((await holder).text)?.state, 'SUCCESS')
  })

  test('an upload that waits past limits.uploadQueueWaitMs is refused readably', async (t) => {
    const srv = await startTestServer(t, {
      limits: { concurrentUploads: 1, uploadQueueWaitMs: 300 },
    })
    const holder = slowUpload(srv, 4_000)
    await eventually(() => metric(srv, 'ueditor_uploads_in_flight'), {
      until: (n) => n === 1,
      timeoutMs: 10_000,
      what: 'one upload in flight',
    })
    const { body, contentType } = imageBody()
    assert.equal(answerOf(await send(srv, body, contentType))?.code, 'UE_RATE_LIMITED')
    assert.equal(await metric(srv, 'ueditor_upload_limit_refusals_total{limit="queue_wait"}'), 1)
    assert.equal(await metric(srv, 'ueditor_upload_queue_total{outcome="timeout"}'), 1)
    assert.equal(firstJsonBody((await holder).text)?.state, 'SUCCESS')
  })

  test('a refused body over http.drainMaxBytes gets the connection closed at once', async (t) => {
    const srv = await startTestServer(t, {
      limits: { uploadsPerMinute: 1 },
      http: { drainMaxBytes: 65_536 },
    })
    const { body, contentType } = imageBody()
    assert.equal(answerOf(await send(srv, body, contentType))?.state, 'SUCCESS')
    const { pathname, search } = new URL(srv.action('image'))
    const started = Date.now()
    const head = `POST ${pathname}${search} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${contentType}\r\nContent-Length: 50000000\r\n\r\n`
    // Headers and 100 KB of a declared 50 MB, then nothing: the server must not wait for more.
    const e = await rawExchange(srv, [head, Buffer.alloc(100_000, 1)], { maxMs: 20_000 })
    assert.equal(e.closedByServer, true)
    assert.ok(Date.now() - started < 15_000, 'the server waited for the body')
    assert.equal(firstJsonBody(e.text)?.code, 'UE_RATE_LIMITED', e.text.slice(0, 300))
  })

  test('a refused body that stops arriving is given up after http.drainTimeoutMs', async (t) => {
    const srv = await startTestServer(t, {
      limits: { uploadsPerMinute: 1 },
      http: { drainTimeoutMs: 500 },
    })
    const { body, contentType } = imageBody()
    assert.equal(answerOf(await send(srv, body, contentType))?.state, 'SUCCESS')
    const { pathname, search } = new URL(srv.action('image'))
    const head = `POST ${pathname}${search} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${contentType}\r\nContent-Length: 1000000\r\n\r\n`
    const started = Date.now()
    const e = await rawExchange(srv, [head, Buffer.alloc(10_000, 1)], { maxMs: 20_000 })
    assert.equal(e.closedByServer, true)
    assert.ok(Date.now() - started < 15_000, 'the drain did not stop')
    assert.equal(firstJsonBody(e.text)?.code, 'UE_RATE_LIMITED', e.text.slice(0, 300))
  })
})
