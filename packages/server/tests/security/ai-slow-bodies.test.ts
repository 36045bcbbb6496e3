import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { startAiUpstream } from '../helpers/ai-upstream.js'
import { bearer } from '../helpers/auth.js'
import { eventually } from '../helpers/eventually.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { test } from '../helpers/test.js'

const USERS = ['ann', 'ben', 'cat', 'dan', 'eve'].map((name) => ({
  name,
  token: `${name}-token-0123456789abcdef0123`,
}))
const [ANN, BEN, CAT, DAN, EVE] = USERS as [
  (typeof USERS)[0],
  (typeof USERS)[0],
  (typeof USERS)[0],
  (typeof USERS)[0],
  (typeof USERS)[0],
]

/** A ModStart body of about 2 KB, as the dialog sends a selection to translate. */
const BODY = Buffer.from(
  JSON.stringify({ systemPrompt: 'Translate into English.', prompt: '你好，世界。'.repeat(100) }),
)

interface SlowCall {
  socket: Socket
  /** Everything the server has sent so far. */
  received(): string
  /** Sends the rest of the body. */
  finish(): void
  closed: Promise<void>
}

/** An AI call whose body arrives slowly: the head and a few bytes now, the rest on `finish()`. */
function slowCall(srv: TestServer, token: string): Promise<SlowCall> {
  const { port } = new URL(srv.url)
  const head =
    `POST /ueditor?action=ai HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${BODY.length}\r\n\r\n`
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    const socket = connect({ port: Number(port), host: '127.0.0.1' }, () => {
      socket.write(Buffer.concat([Buffer.from(head), BODY.subarray(0, 16)]), () =>
        resolve({
          socket,
          received: () => Buffer.concat(chunks).toString('utf8'),
          finish: () => socket.write(BODY.subarray(16)),
          closed,
        }),
      )
    })
    const closed = new Promise<void>((done) => socket.on('close', () => done()))
    socket.on('data', (d: Buffer) => chunks.push(d))
    socket.on('error', () => {})
  })
}

async function ask(srv: TestServer, token: string): Promise<string> {
  const res = await fetch(srv.action('ai'), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...bearer(token) },
    body: BODY,
  })
  return res.text()
}

async function setup(t: { after(fn: () => Promise<void>): void }, http = {}) {
  const upstream = await startAiUpstream(t)
  const srv = await startTestServer(t, {
    auth: { tokens: USERS.map((u) => `${u.name}:${u.token}`) },
    // The defaults that matter here: 8 calls in flight per node, 2 per user.
    ai: { baseUrl: upstream.baseUrl, apiKey: 'sk-test', model: 'test-model', dailyTokens: 0 },
    http,
  })
  return { srv, upstream }
}

test('slow bodies from four users hold no AI slot: another user is served while they arrive, and each is served once it is in', async (t) => {
  const { srv, upstream } = await setup(t)
  const slow = await Promise.all(
    [ANN, BEN, CAT, DAN].flatMap((u) => [slowCall(srv, u.token), slowCall(srv, u.token)]),
  )
  t.after(() => {
    for (const call of slow) call.socket.destroy()
  })
  // Each of the eight has sent its head and the start of its body, and is waiting on it.
  await new Promise((r) => setTimeout(r, 300))
  const started = performance.now()
  const answer = await ask(srv, EVE.token)
  const eveMs = Math.round(performance.now() - started)
  assert.match(answer, /"type":"end"/, answer.slice(0, 300))
  assert.doesNotMatch(answer, /UE_BUSY|UE_AI_RATE_LIMITED/)
  assert.equal(upstream.requests.length, 1, 'no slow body reached the upstream before it was in')

  for (const call of slow) call.finish()
  const answers = await eventually(async () => slow.map((c) => c.received()), {
    until: (texts) => texts.every((text) => /"type":"end"/.test(text)),
    timeoutMs: 20_000,
    what: 'every slow call answered to its end',
  })
  t.diagnostic(
    `8 slow bodies of 4 users in flight (the node's 8 slots, 2 per user); another user's call answered in ${eveMs} ms; then all 8 served once their bodies were in`,
  )
  for (const text of answers) assert.match(text, /"type":"end"/, text.slice(0, 300))
  assert.equal(upstream.requests.length, 9)
})

test('a user past twice ai.concurrencyPerUser slow bodies is refused at once, and a stalled body is ended by the body deadline', async (t) => {
  const { srv, upstream } = await setup(t, { bodyIdleTimeoutMs: 1_000 })
  const slow = await Promise.all(Array.from({ length: 4 }, () => slowCall(srv, ANN.token)))
  t.after(() => {
    for (const call of slow) call.socket.destroy()
  })
  const fifth = await slowCall(srv, ANN.token)
  t.after(() => fifth.socket.destroy())
  const refusal = await eventually(async () => fifth.received(), {
    until: (text) => text.includes('"code"'),
    what: 'the fifth call refused',
  })
  assert.match(refusal, /UE_AI_RATE_LIMITED/)
  // Other users are served meanwhile.
  assert.match(await ask(srv, BEN.token), /"type":"end"/)
  const ended = await eventually(async () => slow.map((c) => c.received()), {
    until: (texts) => texts.every((text) => text.includes('"code"')),
    timeoutMs: 20_000,
    what: 'every slow call answered with an error code',
  })
  for (const text of ended) assert.match(text, /UE_BODY_TIMEOUT/, text.slice(0, 300))
  await Promise.all(slow.map((c) => c.closed))
  t.diagnostic(
    '4 stalled bodies of one user ended by a 1 s body idle deadline; a fifth refused at once',
  )
  assert.equal(upstream.requests.length, 1)
  assert.match(await ask(srv, ANN.token), /"type":"end"/)
})
