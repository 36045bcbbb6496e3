import assert from 'node:assert/strict'
import { png } from '../helpers/fixtures.js'
import {
  assertStillServes,
  assertUnchanged,
  firstJsonBody,
  type RawExchange,
  rawExchange,
  snapshot,
} from '../helpers/hostile.js'
import { multipartBody } from '../helpers/multipart.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'

const SHORT = { http: { headersTimeoutMs: 1_000, bodyIdleTimeoutMs: 1_000 } }

/** Fetches config again and again while `attack` runs; every answer must be a 200. */
async function configKeepsAnswering(srv: TestServer, attack: Promise<RawExchange[]>) {
  let done = false
  const statuses: number[] = []
  const probe = (async () => {
    while (!done) {
      statuses.push((await fetch(srv.action('config'))).status)
      await new Promise((r) => setTimeout(r, 100))
    }
  })()
  const exchanges = await attack.finally(() => {
    done = true
  })
  await probe
  assert.ok(statuses.length > 0)
  assert.ok(
    statuses.every((s) => s === 200),
    statuses.join(),
  )
  return exchanges
}

describe('S13: slowloris headers and slow bodies', () => {
  test('connections that trickle headers or send nothing are closed by the server', async (t) => {
    const srv = await startTestServer(t, SHORT)
    const trickle = Array.from({ length: 30 }, (_, i) => `X-Slow-${i}: ${i}\r\n`)
    const attack = Promise.all([
      ...Array.from({ length: 15 }, () =>
        rawExchange(
          srv,
          ['GET /ueditor?action=config HTTP/1.1\r\nHost: 127.0.0.1\r\n', ...trickle],
          {
            gapMs: 300,
            maxMs: 12_000,
          },
        ),
      ),
      ...Array.from({ length: 5 }, () => rawExchange(srv, [], { maxMs: 12_000 })),
    ])
    const exchanges = await configKeepsAnswering(srv, attack)
    for (const e of exchanges) {
      assert.equal(e.closedByServer, true)
      assert.doesNotMatch(e.text, /200 OK/)
    }
    await assertStillServes(srv)
  })

  test('uploads whose body stalls are aborted with a readable refusal and leave no temp file', async (t) => {
    const srv = await startTestServer(t, SHORT)
    const before = await snapshot(srv)
    const { body, contentType } = multipartBody([
      { name: 'upfile', filename: 'slow.png', value: png(100, 100, { noise: true }) },
    ])
    const head = `POST /ueditor?action=image HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n\r\n`
    const drip = Array.from({ length: 4 }, (_, i) => body.subarray(2048 + i, 2049 + i))
    const attack = Promise.all(
      Array.from({ length: 10 }, () =>
        rawExchange(srv, [Buffer.concat([Buffer.from(head), body.subarray(0, 2048)]), ...drip], {
          gapMs: 2_500,
          maxMs: 12_000,
        }),
      ),
    )
    const exchanges = await configKeepsAnswering(srv, attack)
    for (const e of exchanges) {
      assert.equal(e.closedByServer, true)
      const answer = firstJsonBody(e.text)
      assert.equal(answer?.code, 'UE_BODY_TIMEOUT', e.text.slice(0, 300))
    }
    await assertUnchanged(srv, before)
    await assertStillServes(srv)
  })
})
