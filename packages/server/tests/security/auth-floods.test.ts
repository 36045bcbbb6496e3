import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { generateKeyPair, SignJWT } from 'jose'
import { failureThrottle, REPEATS } from '../../src/auth/throttle.js'
import { createLimiters, MAX_KEYS } from '../../src/limits/limiter.js'
import { ALICE, AUDIENCE, BOB, bearer, startJwks, TOKENS } from '../helpers/auth.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, type TestContext, test } from '../helpers/test.js'

/** What came back from one listing: the editor's `state`/`code` and how long it took. */
interface Sample {
  status: number
  state?: string
  code?: string
  ms: number
}

async function list(srv: TestServer, token: string): Promise<Sample> {
  const started = performance.now()
  const res = await fetch(srv.action('listFile', '&start=0&size=5'), { headers: bearer(token) })
  const body = (await res.json()) as { state?: string; code?: string }
  return { status: res.status, ...body, ms: performance.now() - started }
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
}

const ms = (v: number) => `${v.toFixed(1)} ms`

/**
 * Sends `total` bad credentials from `workers` parallel loops, all from 127.0.0.1, while a valid
 * user on the same address keeps listing; returns both sides' samples.
 */
async function flood(
  srv: TestServer,
  o: { total: number; workers: number; bad: (i: number) => string; valid: () => string },
) {
  let next = 0
  let done = false
  const bad: Sample[] = []
  const valid: Sample[] = []
  const started = performance.now()
  const attackers = Array.from({ length: o.workers }, async () => {
    while (next < o.total) bad.push(await list(srv, o.bad(next++)))
  })
  const user = (async () => {
    while (!done) valid.push(await list(srv, o.valid()))
  })()
  await Promise.all(attackers)
  const seconds = (performance.now() - started) / 1000
  done = true
  await user
  return { bad, valid, seconds }
}

function report(
  t: TestContext,
  label: string,
  r: Awaited<ReturnType<typeof flood>>,
  before: Sample[],
) {
  const count = (code: string) => r.bad.filter((s) => s.code === code).length
  t.diagnostic(
    `${label}: ${r.bad.length} bad credentials in ${r.seconds.toFixed(2)} s ` +
      `(${Math.round(r.bad.length / r.seconds)}/s): ${count('UE_UNAUTHORIZED')} UE_UNAUTHORIZED, ` +
      `${count('UE_AUTH_THROTTLED')} UE_AUTH_THROTTLED; bad answer median ${ms(
        quantile(
          r.bad.map((s) => s.ms),
          0.5,
        ),
      )}`,
  )
  t.diagnostic(
    `${label}: valid user on the same address served ${r.valid.filter((s) => s.state === 'SUCCESS').length}/${r.valid.length}; ` +
      `median ${ms(
        quantile(
          r.valid.map((s) => s.ms),
          0.5,
        ),
      )}, p95 ${ms(
        quantile(
          r.valid.map((s) => s.ms),
          0.95,
        ),
      )} ` +
      `(alone before the flood: median ${ms(
        quantile(
          before.map((s) => s.ms),
          0.5,
        ),
      )})`,
  )
  t.diagnostic(
    `${label}: heap ${Math.round(process.memoryUsage().heapUsed / 2 ** 20)} MiB (test process and server together)`,
  )
}

function assertServedThroughout(r: Awaited<ReturnType<typeof flood>>) {
  assert.ok(r.valid.length >= 5, `the valid user got ${r.valid.length} turns`)
  for (const s of r.valid) assert.equal(s.state, 'SUCCESS', JSON.stringify(s))
  for (const s of r.bad) {
    assert.ok(s.code === 'UE_UNAUTHORIZED' || s.code === 'UE_AUTH_THROTTLED', JSON.stringify(s))
    assert.ok(s.status === 200, 'the editor answers refusals as HTTP 200 by default')
  }
  // The default bucket (30 a minute) is used up long before the flood ends.
  assert.ok(r.bad.filter((s) => s.code === 'UE_AUTH_THROTTLED').length > r.bad.length / 2)
}

describe('a flood of bad credentials from one address', () => {
  test('static tokens: a valid user behind the same address keeps being served all through the flood', async (t) => {
    const srv = await startTestServer(t, { auth: { tokens: TOKENS } })
    const before: Sample[] = []
    for (let i = 0; i < 20; i++) before.push(await list(srv, ALICE))
    let turn = 0
    const r = await flood(srv, {
      total: 1000,
      workers: 8,
      bad: (i) => `guess-${i}-${randomBytes(12).toString('base64url')}`,
      valid: () => (turn++ % 2 === 0 ? ALICE : BOB),
    })
    report(t, 'static tokens', r, before)
    assertServedThroughout(r)
  })

  test('JWTs: forged, garbage and replayed tokens cost a bounded check each, and a valid token keeps being served', async (t) => {
    const jwks = await startJwks(t)
    const srv = await startTestServer(t, {
      auth: { jwt: { jwksUrl: jwks.url, audience: AUDIENCE } },
    })
    const valid = await jwks.sign({ sub: 'alice' })
    const before: Sample[] = []
    for (let i = 0; i < 20; i++) before.push(await list(srv, valid))
    // Signed by a key the server does not know, under the known kid and an unknown one.
    const other = await generateKeyPair('RS256')
    const forged = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        new SignJWT({ n: i })
          .setProtectedHeader({ alg: 'RS256', kid: i % 2 === 0 ? 'k1' : `k-${i}` })
          .setSubject('alice')
          .setAudience(AUDIENCE)
          .setExpirationTime('5m')
          .sign(other.privateKey),
      ),
    )
    const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url')
    // Well-formed, right algorithm and kid, a 256-byte signature of random bytes: a full
    // RSA verification each, the most an attacker can make the server do without a key.
    const garbage = (i: number) =>
      `${part({ alg: 'RS256', kid: 'k1' })}.${part({ sub: `u${i}`, aud: AUDIENCE, exp: 4e9 })}.${randomBytes(256).toString('base64url')}`
    const fetchesBefore = jwks.requests()
    const r = await flood(srv, {
      total: 1000,
      workers: 8,
      bad: (i) => (i % 10 === 0 ? (forged[i % forged.length] as string) : garbage(i)),
      valid: () => valid,
    })
    report(t, 'JWT (RS256 JWKS)', r, before)
    t.diagnostic(
      `JWT: key set fetched ${jwks.requests() - fetchesBefore} more time(s) during the flood`,
    )
    assertServedThroughout(r)
    // Unknown kids refetch the key set at most once per cooldown (30 s), not once per token.
    assert.ok(jwks.requests() - fetchesBefore <= 1, `${jwks.requests() - fetchesBefore} fetches`)
  })
})

describe('the failure throttle’s own state', () => {
  test('stays bounded under a flood of addresses and credentials, and a repeated credential is refused after REPEATS failures', async (t) => {
    t.mock.timers.enable({ apis: ['Date', 'setTimeout'] })
    const throttle = failureThrottle(createLimiters(null), 30)
    for (let i = 0; i < 50_000; i++) {
      const address = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
      await throttle.fail(address, `token-${i}`)
      await throttle.fail('192.0.2.1', `token-${i}`)
    }
    const tracked = throttle.tracked()
    assert.ok(tracked.addresses <= MAX_KEYS, JSON.stringify(tracked))
    assert.ok(tracked.credentials <= MAX_KEYS, JSON.stringify(tracked))

    const fresh = failureThrottle(createLimiters(null), 30)
    for (let i = 0; i < REPEATS; i++) {
      assert.equal(await fresh.spent('192.0.2.7', 'stale'), false)
      await fresh.fail('192.0.2.7', 'stale')
    }
    assert.equal(await fresh.spent('192.0.2.7', 'stale'), true)
    // The same credential from another address, and another credential, are still checked.
    assert.equal(await fresh.spent('192.0.2.8', 'stale'), false)
    assert.equal(await fresh.spent('192.0.2.7', 'other'), false)
    // IPv6 clients share one key per /64.
    for (let i = 0; i < REPEATS; i++) await fresh.fail('2001:db8::1', 'v6')
    assert.equal(await fresh.spent('2001:db8::ffff', 'v6'), true)
    // Over after the minute: checked again.
    t.mock.timers.tick(60_001)
    assert.equal(await fresh.spent('192.0.2.7', 'stale'), false)
  })

  test('an address past its failures is told so on each new failure, and is never blocked as such', async () => {
    const throttle = failureThrottle(createLimiters(null), 5)
    const verdicts: boolean[] = []
    for (let i = 0; i < 8; i++) verdicts.push(await throttle.fail('198.51.100.1', `t${i}`))
    assert.deepEqual(verdicts, [false, false, false, false, false, true, true, true])
    // Nothing here refuses a credential that has not failed: the caller checks it first.
    assert.equal(await throttle.spent('198.51.100.1', 'a-valid-token'), false)
  })
})
