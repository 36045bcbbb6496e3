import assert from 'node:assert/strict'
import pg from 'pg'
import type { ServerConfigInput } from '../../src/config/schema.js'
import { createLimiters } from '../../src/limits/limiter.js'
import { startAiUpstream } from '../helpers/ai-upstream.js'
import { ALICE, bearer, TOKENS } from '../helpers/auth.js'
import { eventually } from '../helpers/eventually.js'
import { png } from '../helpers/fixtures.js'
import { firstJsonBody, postBody, rawExchange } from '../helpers/hostile.js'
import { multipartBody } from '../helpers/multipart.js'
import { skipOrFail, startPostgresLane } from '../helpers/postgres.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { after, describe, test } from '../helpers/test.js'

async function imageUpload(srv: TestServer): Promise<{ state?: string; code?: string }> {
  const { body, contentType } = multipartBody([{ name: 'upfile', filename: 'a.png', value: png() }])
  return (await postBody(srv, 'image', body, contentType)).json()
}

describe('the per-client limits’ memory', () => {
  test('a flood of distinct keys keeps a limit to its cap of keys, and a key seen again keeps its count', async () => {
    const limit = createLimiters(null, 1_000).limit({ name: 'flood', points: 2, seconds: 60 })
    await limit.take('kept')
    await limit.take('kept')
    for (let i = 0; i < 100_000; i++) {
      await limit.take(`client-${i}`)
      if (i % 400 === 0) await limit.take('kept')
      assert.ok(limit.tracked() <= 1_000, `${limit.tracked()} keys held`)
    }
    assert.equal(await limit.spent('kept'), true)
    assert.ok((await limit.take('kept')) > 0)
  })
})

/** The count the index holds for `key` in the limits' table (0: none). */
async function slotsInFlight(url: string, key: string): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query('select points from rate_limits where key = $1', [key])
    return rows[0]?.points ?? 0
  } finally {
    await client.end()
  }
}

// One cluster for this file; one database per test.
const lane = await startPostgresLane()

if ('unavailable' in lane) {
  test('per-client limits hold across two nodes on PostgreSQL', (t) =>
    skipOrFail(t, lane.unavailable))
} else {
  const { cluster } = lane
  after(() => cluster.stop())

  /** Two nodes on one PostgreSQL index, as two machines of a deployment run them. */
  async function twoNodes(
    t: { after(fn: () => Promise<void>): void },
    config: ServerConfigInput,
  ): Promise<[TestServer, TestServer]> {
    const url = await cluster.createDatabase()
    const settings = { ...config, index: { driver: 'postgres' as const, url, poolSize: 4 } }
    const a = await startTestServer(t, settings)
    const b = await startTestServer(t, settings)
    return [a, b]
  }

  describe('per-client limits on two nodes of one PostgreSQL index', () => {
    test('limits.uploadsPerMinute holds once for a client of both nodes, not once per node', async (t) => {
      const [a, b] = await twoNodes(t, { limits: { uploadsPerMinute: 2 } })
      assert.equal((await imageUpload(a)).state, 'SUCCESS')
      assert.equal((await imageUpload(b)).state, 'SUCCESS')
      assert.equal((await imageUpload(a)).code, 'UE_RATE_LIMITED')
      assert.equal((await imageUpload(b)).code, 'UE_RATE_LIMITED')
    })

    test('limits.concurrentUploads counts a client’s uploads in flight on both nodes, and a slot comes back when one ends', async (t) => {
      const [a, b] = await twoNodes(t, { limits: { concurrentUploads: 1, uploadQueue: 0 } })
      const { url } = a.ue.config.index as { url: string }
      const { body, contentType } = multipartBody([
        { name: 'upfile', filename: 'slow.png', value: png(50, 50, { noise: true }) },
      ])
      const head = `POST /ueditor?action=image HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n\r\n`
      // Holds one upload open on node a: headers and part of the body, the rest later.
      const slow = rawExchange(
        a,
        [Buffer.concat([Buffer.from(head), body.subarray(0, 1000)]), body.subarray(1000)],
        { gapMs: 3_000, maxMs: 10_000 },
      )
      // Once node a counts the slow upload's slot, node b refuses the client's next upload.
      const held = await eventually(() => slotsInFlight(url, 'upload-slots:127.0.0.1'), {
        until: (n) => n === 1,
        what: 'one upload slot held',
      })
      assert.equal(held, 1)
      const refused = await eventually(async () => (await imageUpload(b)).code, {
        until: (code) => code === 'UE_RATE_LIMITED',
        what: 'the other node refusing the upload',
      })
      assert.equal(refused, 'UE_RATE_LIMITED')
      assert.equal(firstJsonBody((await slow).text)?.state, 'SUCCESS')
      assert.equal((await imageUpload(b)).state, 'SUCCESS')
    })

    test('auth.failuresPerMinute counts an address’s failures on both nodes together', async (t) => {
      const [a, b] = await twoNodes(t, { auth: { tokens: TOKENS, failuresPerMinute: 2 } })
      const codes: (string | undefined)[] = []
      for (const srv of [a, b, a, b]) {
        const res = await fetch(srv.action('listImage'), {
          headers: bearer(`wrong-${codes.length}`),
        })
        codes.push((await res.json()).code)
      }
      assert.deepEqual(codes, [
        'UE_UNAUTHORIZED',
        'UE_UNAUTHORIZED',
        'UE_AUTH_THROTTLED',
        'UE_AUTH_THROTTLED',
      ])
      // A valid credential from the same address is still served on both.
      for (const srv of [a, b]) {
        const res = await fetch(srv.action('listImage'), { headers: bearer(ALICE) })
        assert.equal((await res.json()).state, 'SUCCESS')
      }
    })

    test('ai.requestsPerMinute holds once for a user of both nodes', async (t) => {
      const upstream = await startAiUpstream(t)
      const [a, b] = await twoNodes(t, {
        auth: { tokens: TOKENS },
        ai: {
          baseUrl: upstream.baseUrl,
          apiKey: 'sk-test',
          model: 'test-model',
          requestsPerMinute: 1,
        },
      })
      const ask = (srv: TestServer) =>
        fetch(srv.action('ai'), {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...bearer(ALICE) },
          body: JSON.stringify({ systemPrompt: 'Translate.', prompt: 'Hello' }),
        }).then((r) => r.text())
      assert.match(await ask(a), /"type":"end"/)
      assert.match(await ask(b), /UE_AI_RATE_LIMITED/)
      assert.equal(upstream.requests.length, 1)
    })
  })
}
