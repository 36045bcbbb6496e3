import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import type { ServerConfigInput } from '../../src/config/schema.js'
import { auditLines, startAiRelay } from '../helpers/ai-relay.js'
import { ALICE, bearer } from '../helpers/auth.js'
import { eventually } from '../helpers/eventually.js'
import type { TestServer } from '../helpers/start-server.js'
import { test } from '../helpers/test.js'

const MiB = 1024 * 1024
const BODY = JSON.stringify({ systemPrompt: 'Write a long story.', prompt: 'About rivers.' })

async function setup(
  t: { after(fn: () => Promise<void>): void },
  ai: NonNullable<ServerConfigInput['ai']>,
) {
  const relay = await startAiRelay(t, { requestsPerMinute: 0, dailyTokens: 0, ...ai })
  relay.upstream.mode = 'flood'
  return relay
}

/** An AI call from a client that sends its request and never reads a byte of the answer. */
function unreadCall(srv: TestServer): Promise<{ socket: Socket; closed: Promise<void> }> {
  const { port } = new URL(srv.url)
  return new Promise((resolve) => {
    const socket = connect({ port: Number(port), host: '127.0.0.1' }, () => {
      socket.pause()
      socket.write(
        `POST /ueditor?action=ai HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ALICE}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(BODY)}\r\n\r\n${BODY}`,
        () => resolve({ socket, closed }),
      )
    })
    const closed = new Promise<void>((done) => socket.on('close', () => done()))
    socket.on('error', () => {})
  })
}

/** Samples this process's RSS (the server runs in it) until stopped; returns the peak. */
function rssPeak(): { stop(): number } {
  let peak = process.memoryUsage().rss
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss)
  }, 20)
  return {
    stop() {
      clearInterval(timer)
      return Math.max(peak, process.memoryUsage().rss)
    },
  }
}

const mib = (bytes: number) => (bytes / MiB).toFixed(1)

async function served(srv: TestServer): Promise<string> {
  const res = await fetch(srv.action('ai'), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...bearer(ALICE) },
    body: BODY,
  })
  return res.text()
}

test('an upstream that ignores max_tokens is cut at the output cap and aborted, with memory bounded for clients that never read', async (t) => {
  const { srv, upstream, log } = await setup(t, { concurrencyPerUser: 4 })
  // 16 M characters per call, four times what the attack pass saw.
  upstream.floodChars = 16_000_000
  const before = process.memoryUsage().rss
  const sampler = rssPeak()
  const calls = await Promise.all(Array.from({ length: 4 }, () => unreadCall(srv)))
  t.after(() => {
    for (const c of calls) c.socket.destroy()
  })
  const aborted = await eventually(async () => upstream.closedEarly(), {
    until: (n) => n === 4,
    timeoutMs: 30_000,
    what: 'the four upstream calls aborted',
  })
  const lines = await eventually(async () => auditLines(log), {
    until: (l) => l.length === 4,
    what: 'four audit lines',
  })
  const peak = sampler.stop()
  t.diagnostic(
    `4 unread calls against an upstream streaming 16 M characters each: RSS ${mib(before)} → peak ${mib(peak)} MiB; the upstream wrote ${mib(upstream.bytesSent())} MiB in all before it was aborted`,
  )
  assert.equal(aborted, 4, 'every upstream request was aborted')
  assert.equal(lines.length, 4)
  for (const line of lines) {
    assert.equal(line.outcome, 'truncated')
    assert.ok(line.tokensOut <= 4_096, `tokensOut ${line.tokensOut}`)
  }
  assert.ok(peak - before < 64 * MiB, `RSS grew by ${mib(peak - before)} MiB`)

  // A client that reads gets the answer up to the cut, ended with the truncation marker.
  const text = await served(srv)
  const data = text
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)) as { type: string; data: string; finishReason?: string })
  assert.deepEqual(data.at(-1), { type: 'end', data: '', finishReason: 'length' })
  const answered = data.filter((d) => d.type === 'data').reduce((n, d) => n + d.data.length, 0)
  t.diagnostic(`a reading client got ${answered} characters (the cap is 4096 tokens)`)
  assert.ok(answered <= 6 * 4_096, `${answered} characters`)
  assert.equal(
    await eventually(async () => upstream.closedEarly(), {
      until: (n) => n === 5,
      what: 'the fifth upstream call aborted',
    }),
    5,
  )
})

test('a client that stops reading ends the call after ai.writeTimeoutMs: the upstream is aborted, the slot freed and the connection closed', async (t) => {
  const { srv, upstream, log } = await setup(t, {
    concurrencyPerUser: 1,
    // No cut for a long while: only the client's stall can end this call.
    maxOutputTokens: 1_000_000,
    writeTimeoutMs: 500,
    timeoutMs: 600_000,
    idleTimeoutMs: 600_000,
  })
  // Without end, in control characters: one byte each towards the cut, six each in the JSON
  // of the client's events, so the socket to the client fills long before the cut.
  upstream.floodPiece = '\u0001'.repeat(1_000)
  upstream.floodChars = Number.MAX_SAFE_INTEGER
  const before = process.memoryUsage().rss
  const sampler = rssPeak()
  const call = await unreadCall(srv)
  t.after(() => call.socket.destroy())
  const aborted = await eventually(async () => upstream.closedEarly(), {
    until: (n) => n === 1,
    timeoutMs: 30_000,
    what: 'the upstream call aborted',
  })
  assert.equal(aborted, 1, 'the upstream request was aborted')
  const [line] = await eventually(async () => auditLines(log), {
    until: (l) => l.length === 1,
    what: 'an audit line',
  })
  // The server closes the connection without waiting for the client to read again.
  const connections = () =>
    new Promise<number>((resolve, reject) =>
      srv.http.getConnections((err, n) => (err ? reject(err) : resolve(n))),
    )
  assert.equal(
    await eventually(connections, {
      until: (n) => n === 0,
      what: 'the connection closed by the server',
    }),
    0,
  )
  // Reading again, the client finds what was in flight, then the end of the connection.
  call.socket.resume()
  await call.closed
  const peak = sampler.stop()
  t.diagnostic(
    `a client that never read: the upstream wrote ${mib(upstream.bytesSent())} MiB before the call ended; RSS ${mib(before)} → peak ${mib(peak)} MiB`,
  )
  assert.equal(line.outcome, 'stalled')
  // The user's one slot is free again.
  upstream.mode = 'stream'
  assert.match(await served(srv), /"type":"end"/)
})
