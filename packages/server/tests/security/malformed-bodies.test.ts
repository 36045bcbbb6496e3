import assert from 'node:assert/strict'
import { gzipSync } from 'node:zlib'
import { png } from '../helpers/fixtures.js'
import {
  assertStillServes,
  assertUnchanged,
  expectRefused,
  firstJsonBody,
  postBody,
  rawExchange,
  snapshot,
} from '../helpers/hostile.js'
import { multipartBody, webUploaderFields } from '../helpers/multipart.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'

const BOUNDARY = '----WebKitFormBoundaryHostile123'
const TYPE = `multipart/form-data; boundary=${BOUNDARY}`

function filePart(name = 'a.png', value: Buffer = png()): Buffer {
  return Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="upfile"; filename="${name}"\r\nContent-Type: image/png\r\n\r\n`,
    ),
    value,
    Buffer.from('\r\n'),
  ])
}
const CLOSE = Buffer.from(`--${BOUNDARY}--\r\n`)

const REFUSED = ['UE_BODY_INVALID', 'UE_FILE_MISSING', 'UE_TOO_MANY_FILES', 'UE_FILE_TOO_LARGE']

function rawPost(srv: TestServer, path: string, headers: string[], body: Buffer) {
  const head = [`POST ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...headers, '', ''].join('\r\n')
  return rawExchange(srv, [Buffer.concat([Buffer.from(head), body])])
}

describe('S9: malformed multipart never crashes or hangs', () => {
  test('each malformed body gets a readable refusal and leaves no temp file', async (t) => {
    const srv = await startTestServer(t)
    const cases: [string, Buffer, string][] = [
      ['no boundary', Buffer.concat([filePart(), CLOSE]), 'multipart/form-data'],
      ['empty boundary', Buffer.concat([filePart(), CLOSE]), 'multipart/form-data; boundary='],
      [
        'body cut mid-boundary',
        Buffer.concat([filePart(), Buffer.from('------WebKitFormBoundar')]),
        TYPE,
      ],
      ['no closing boundary', filePart(), TYPE],
      [
        'part header starting with a space',
        Buffer.concat([
          Buffer.from(
            `--${BOUNDARY}\r\n Content-Disposition: form-data; name="upfile"; filename="a.png"\r\n\r\n`,
          ),
          png(),
          Buffer.from('\r\n'),
          CLOSE,
        ]),
        TYPE,
      ],
      [
        'part header starting with a tab',
        Buffer.concat([
          Buffer.from(
            `--${BOUNDARY}\r\n\tContent-Disposition: form-data; name="upfile"; filename="a.png"\r\n\r\n`,
          ),
          png(),
          Buffer.from('\r\n'),
          CLOSE,
        ]),
        TYPE,
      ],
      [
        '200-character boundary',
        Buffer.concat([Buffer.from(`--${'b'.repeat(200)}\r\n`), Buffer.from('junk\r\n')]),
        `multipart/form-data; boundary=${'b'.repeat(200)}`,
      ],
      [
        '50,000 empty parts',
        Buffer.concat([
          Buffer.from(
            `--${BOUNDARY}\r\nContent-Disposition: form-data; name="x"\r\n\r\n\r\n`.repeat(50_000),
          ),
          filePart(),
          CLOSE,
        ]),
        TYPE,
      ],
      [
        '3,000 header pairs in one part',
        Buffer.concat([
          Buffer.from(`--${BOUNDARY}\r\n`),
          Buffer.from(Array.from({ length: 3_000 }, (_, i) => `X-H${i}: v\r\n`).join('')),
          Buffer.from('Content-Disposition: form-data; name="upfile"; filename="a.png"\r\n\r\n'),
          png(),
          Buffer.from('\r\n'),
          CLOSE,
        ]),
        TYPE,
      ],
      ['binary garbage', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 37) % 256)), TYPE],
      [
        'a url-encoded body to a multipart action',
        Buffer.from('upfile=abc'),
        'application/x-www-form-urlencoded',
      ],
    ]
    for (const [label, body, contentType] of cases)
      await expectRefused(srv, () => postBody(srv, 'image', body, contentType), {
        codes: REFUSED,
        label,
        mayClose: true,
      })
  })

  test('an empty boundary parameter is refused as an invalid body, not read as one without a file', async (t) => {
    const srv = await startTestServer(t)
    const body = Buffer.concat([filePart(), CLOSE])
    const res = await postBody(srv, 'image', body, 'multipart/form-data; boundary=')
    const answer = (await res.json()) as { code?: string }
    assert.equal(answer.code, 'UE_BODY_INVALID')
    assert.deepEqual(await srv.storedFiles(), [])
  })

  test('a client that disconnects mid-file leaves nothing behind', async (t) => {
    const srv = await startTestServer(t)
    const before = await snapshot(srv)
    const body = Buffer.concat([filePart('a.png', png(100, 100, { noise: true })), CLOSE])
    const exchange = await rawExchange(
      srv,
      [
        `POST /ueditor?action=image HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${TYPE}\r\nContent-Length: ${body.length}\r\n\r\n`,
        body.subarray(0, body.length / 2),
      ],
      { gapMs: 20, maxMs: 300 },
    )
    assert.equal(exchange.closedByServer, false)
    await assertUnchanged(srv, before)
    await assertStillServes(srv)
  })
})

describe('S10: size limits cannot be bypassed', () => {
  test('a body longer than its Content-Length is cut at the declared length and refused', async (t) => {
    const srv = await startTestServer(t)
    const before = await snapshot(srv)
    const body = Buffer.concat([filePart('a.png', png(60, 60, { noise: true })), CLOSE])
    const exchange = await rawPost(
      srv,
      '/ueditor?action=image',
      [`Content-Type: ${TYPE}`, 'Content-Length: 1000'],
      body,
    )
    // The bytes past Content-Length parse as a second, garbage request: Node answers that one
    // 400 and closes, which may abort the first before its own (refusing) answer is written.
    assert.doesNotMatch(exchange.text, /SUCCESS/)
    const answer = firstJsonBody(exchange.text)
    if (answer) assert.ok(REFUSED.includes(answer.code ?? ''), answer.code)
    else assert.match(exchange.text, /^HTTP\/1\.1 400 /)
    assert.equal(exchange.closedByServer, true)
    await assertUnchanged(srv, before)
    await assertStillServes(srv)
  })

  test('a chunked body with no length is stopped at the limit', async (t) => {
    const srv = await startTestServer(t, { editor: { imageMaxSize: 100_000 } })
    const chunk = Buffer.alloc(64 * 1024, 0x41)
    let sent = 0
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new Uint8Array(filePart('big.png', png()).subarray(0, -2)))
      },
      pull(c) {
        // Bounded: 5 MB at most, far over the 100 KB limit.
        if (sent >= 5 * 1024 * 1024) return c.close()
        sent += chunk.length
        c.enqueue(new Uint8Array(chunk))
      },
    })
    await expectRefused(
      srv,
      () =>
        fetch(srv.action('image'), {
          method: 'POST',
          body: stream,
          headers: { 'Content-Type': TYPE },
          // @ts-expect-error: Node's fetch needs `duplex` for streamed bodies.
          duplex: 'half',
        }),
      { codes: ['UE_FILE_TOO_LARGE'], mayClose: true },
    )
  })

  test('the WebUploader size field cannot lift the limit', async (t) => {
    const srv = await startTestServer(t, { editor: { imageMaxSize: 10_000 } })
    const big = png(100, 100, { noise: true })
    const { body, contentType } = multipartBody([
      ...webUploaderFields('a.png', 100, 'image/png'),
      { name: 'upfile', filename: 'a.png', value: big },
    ])
    await expectRefused(srv, () => postBody(srv, 'image', body, contentType), {
      codes: ['UE_FILE_TOO_LARGE'],
      mayClose: true,
    })
  })

  test('a 30 MB base64 scrawl is refused without being decoded', async (t) => {
    const srv = await startTestServer(t)
    const huge = `upfile=${'A'.repeat(30 * 1024 * 1024)}`
    await expectRefused(
      srv,
      () => postBody(srv, 'scrawl', huge, 'application/x-www-form-urlencoded'),
      {
        codes: ['UE_FILE_TOO_LARGE'],
        mayClose: true,
      },
    )
  })

  test('compressed request bodies are refused', async (t) => {
    const srv = await startTestServer(t)
    const { body, contentType } = multipartBody([
      { name: 'upfile', filename: 'a.png', value: png() },
    ])
    const scrawl = `upfile=${encodeURIComponent(png().toString('base64'))}`
    for (const [action, payload, type] of [
      ['image', body, contentType],
      ['scrawl', Buffer.from(scrawl), 'application/x-www-form-urlencoded'],
    ] as const)
      for (const encoding of ['gzip', 'deflate', 'br', 'gzip, identity'])
        await expectRefused(
          srv,
          () => postBody(srv, action, gzipSync(payload), type, { 'Content-Encoding': encoding }),
          { codes: ['UE_BODY_ENCODING'], label: `${action} ${encoding}` },
        )
  })
})
