import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, rm, statfs, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { startAiUpstream } from '../helpers/ai-upstream.js'
import { ALICE, bearer, TOKENS } from '../helpers/auth.js'
import { eventually } from '../helpers/eventually.js'
import { blob, png } from '../helpers/fixtures.js'
import { skipOrFail, startPostgresLane } from '../helpers/postgres.js'
import { startS3rver } from '../helpers/s3rver.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { type TestContext, test } from '../helpers/test.js'

const run = promisify(execFile)

/** Every request of a load gets its answer within this, or the test fails (no hang). */
const ANSWER_WITHIN_MS = 20_000

interface Answer {
  status: number
  body: { state?: string; code?: string; url?: string }
}

async function upload(srv: TestServer, bytes: Buffer, name: string, action = 'image') {
  const form = new FormData()
  form.append(action === 'file' ? 'file' : 'upfile', blob(bytes), name)
  const res = await fetch(srv.action(action), {
    method: 'POST',
    body: form,
    signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
  })
  return { status: res.status, body: await res.json() } as Answer
}

async function readiness(srv: TestServer) {
  const res = await fetch(`${srv.url}/readyz`, { signal: AbortSignal.timeout(ANSWER_WITHIN_MS) })
  return { status: res.status, text: await res.text() }
}

/** A small bounded load: uploads and listings at once, each answered or the test fails. */
async function burst(srv: TestServer, uploads: number): Promise<Answer[]> {
  const listing = async (): Promise<Answer> => {
    const res = await fetch(srv.action('listImage', '&start=0&size=20'), {
      signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
    })
    return { status: res.status, body: await res.json() }
  }
  return Promise.all([
    ...Array.from({ length: uploads }, (_, i) => upload(srv, png(16, 16), `load-${i}.png`)),
    ...Array.from({ length: 4 }, listing),
  ])
}

function assertReadableRefusals(answers: Answer[], code: string): void {
  for (const a of answers) {
    assert.equal(a.status, 200, 'the editor answers refusals with 200 and a state')
    assert.notEqual(a.body.state, 'SUCCESS')
    assert.equal(typeof a.body.state, 'string')
    assert.equal(a.body.code, code, JSON.stringify(a.body))
  }
}

test('with PostgreSQL stopped every request is refused readably, readyz names the database, and the server recovers when it is back', async (t) => {
  const lane = await startPostgresLane()
  if ('unavailable' in lane) return skipOrFail(t, lane.unavailable)
  const { cluster } = lane
  t.after(() => cluster.stop())
  const url = await cluster.createDatabase()
  const srv = await startTestServer(t, {
    index: { driver: 'postgres', url, poolSize: 4, connectTimeoutMs: 2000, queryTimeoutMs: 5000 },
    images: { enabled: false },
  })
  const first = await upload(srv, png(8, 8), 'before.png')
  assert.equal(first.body.state, 'SUCCESS')
  const storedBefore = await srv.storedFiles()
  assert.equal((await readiness(srv)).status, 200)

  await cluster.pause()
  const answers = await burst(srv, 12)
  assertReadableRefusals(answers, 'UE_INDEX_FAILED')
  // An object whose row could not be written is deleted again: nothing without a row.
  assert.deepEqual(await srv.storedFiles(), storedBefore)

  const notReady = await eventually(() => readiness(srv), {
    until: (r) => r.status === 503,
    timeoutMs: 10_000,
    what: 'readyz answering 503',
  })
  assert.deepEqual(JSON.parse(notReady.text), { status: 'not ready', failed: ['database'] })
  assert.ok(!notReady.text.includes(cluster.password) && !notReady.text.includes('127.0.0.1'))
  const health = await fetch(`${srv.url}/healthz`)
  assert.equal(health.status, 200, 'liveness does not depend on the database')

  await cluster.resume()
  const ready = await eventually(() => readiness(srv), {
    until: (r) => r.status === 200,
    timeoutMs: 20_000,
    what: 'readyz answering 200 again',
  })
  assert.equal(ready.status, 200)
  const after = await upload(srv, png(8, 8), 'after.png')
  assert.equal(after.body.state, 'SUCCESS', 'recovered without a restart')
})

test('with the S3 endpoint down every upload is refused readably, readyz names the storage, and the server recovers when it is back', async (t) => {
  const s3 = await startS3rver()
  t.after(() => s3.close())
  const bucket = await s3.createBucket()
  const srv = await startTestServer(t, {
    storage: s3.storageConfig(bucket),
    images: { enabled: false },
  })
  const first = await upload(srv, png(8, 8), 'before.png')
  assert.equal(first.body.state, 'SUCCESS')
  assert.equal((await readiness(srv)).status, 200)

  await s3.stop()
  const answers = await burst(srv, 8)
  assertReadableRefusals(answers.slice(0, 8), 'UE_STORAGE_FAILED')
  // The listings come from the index, which still works: only the first upload has a row.
  for (const listing of answers.slice(8)) {
    assert.equal(listing.body.state, 'SUCCESS')
    assert.equal((listing.body as { total?: number }).total, 1, 'no row without its object')
  }
  const served = await fetch(`${srv.url}${first.body.url}`, {
    signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
  })
  assert.ok(served.status >= 500, `a stored file cannot be served now (${served.status})`)
  assert.equal(served.headers.get('content-type')?.startsWith('application/json'), true)
  const notReady = await eventually(() => readiness(srv), {
    until: (r) => r.status === 503,
    timeoutMs: 10_000,
    what: 'readyz answering 503',
  })
  assert.deepEqual(JSON.parse(notReady.text), { status: 'not ready', failed: ['storage'] })
  assert.ok(!notReady.text.includes(bucket) && !notReady.text.includes('127.0.0.1'))

  await s3.restart()
  await eventually(() => readiness(srv), {
    until: (r) => r.status === 200,
    timeoutMs: 20_000,
    what: 'readyz answering 200 again',
  })
  const after = await upload(srv, png(8, 8), 'after.png')
  assert.equal(after.body.state, 'SUCCESS', 'recovered without a restart')
  assert.equal((await fetch(`${srv.url}${first.body.url}`)).status, 200)
})

/** A real small volume: a 4 MiB tmpfs, which needs root (CI runs as root). */
async function smallVolume(t: TestContext): Promise<string | null> {
  if (process.getuid?.() !== 0) {
    const reason = 'mounting a small tmpfs volume needs root'
    if (process.env.CI === 'true') throw new Error(`full-disk lane required on CI: ${reason}`)
    t.skip(reason)
    return null
  }
  const dir = await mkdtemp(join(tmpdir(), 'ue-full-'))
  await run('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir])
  t.after(async () => {
    await run('umount', [dir]).catch(() => {})
    await rm(dir, { recursive: true, force: true })
  })
  return dir
}

/** Leaves about `free` bytes on the volume holding `dir`, in a file of its own. */
async function fillUpTo(dir: string, filler: string, free: number): Promise<void> {
  await rm(filler, { force: true })
  const s = await statfs(dir)
  const available = s.bavail * s.bsize
  await writeFile(filler, Buffer.alloc(Math.max(0, available - free)))
}

test('on a full disk uploads are refused readably, nothing partial is left, readyz names the disk, and space coming back heals it', async (t) => {
  const volume = await smallVolume(t)
  if (volume === null) return
  const root = join(volume, 'files')
  await mkdir(root)
  const filler = join(volume, 'filler')
  const srv = await startTestServer(t, {
    storage: { driver: 'local', root },
    images: { enabled: false },
    limits: { minFreeBytes: 100 * 1024 },
  })
  const document = Buffer.alloc(600 * 1024, 'full disk test\n')

  // Above the floor but too little for the file: the write itself runs out of space.
  await fillUpTo(volume, filler, 400 * 1024)
  const nospace = await upload(srv, document, 'big.txt', 'file')
  assert.equal(nospace.status, 200)
  assert.notEqual(nospace.body.state, 'SUCCESS')
  assert.equal(nospace.body.code, 'UE_STORAGE_FULL')
  assert.deepEqual(await srv.storedFiles(), [], 'no partial file, visible or not')

  // Below the floor: refused before the body is read, and not ready.
  await fillUpTo(volume, filler, 20 * 1024)
  const refused = await upload(srv, Buffer.from('small'), 'small.txt', 'file')
  assert.equal(refused.body.code, 'UE_STORAGE_FULL')
  const notReady = await eventually(() => readiness(srv), {
    until: (r) => r.status === 503,
    timeoutMs: 10_000,
    what: 'readyz answering 503',
  })
  assert.deepEqual(JSON.parse(notReady.text), { status: 'not ready', failed: ['disk'] })
  assert.ok(!notReady.text.includes(volume))
  const listing = await (await fetch(srv.action('listFile', '&start=0&size=20'))).json()
  assert.equal(listing.total ?? 0, 0, 'no row was written')

  await rm(filler)
  await eventually(() => readiness(srv), {
    until: (r) => r.status === 200,
    timeoutMs: 10_000,
    what: 'readyz answering 200 again',
  })
  const stored = await upload(srv, document, 'big.txt', 'file')
  assert.equal(stored.body.state, 'SUCCESS')
  assert.equal((await srv.storedFiles()).length, 1)
})

test('with PostgreSQL stopped an AI call under a daily budget is refused readably and never reaches the upstream', async (t) => {
  const lane = await startPostgresLane()
  if ('unavailable' in lane) return skipOrFail(t, lane.unavailable)
  const { cluster } = lane
  t.after(() => cluster.stop())
  const upstream = await startAiUpstream(t)
  const srv = await startTestServer(t, {
    index: {
      driver: 'postgres',
      url: await cluster.createDatabase(),
      poolSize: 2,
      connectTimeoutMs: 2000,
      queryTimeoutMs: 3000,
    },
    auth: { tokens: TOKENS },
    ai: { baseUrl: upstream.baseUrl, apiKey: 'sk-test-model-key', model: 'test-model' },
  })
  const ask = async () => {
    const res = await fetch(srv.action('ai'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(ALICE) },
      body: JSON.stringify({ prompt: 'hello' }),
      signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
    })
    return { status: res.status, text: await res.text() }
  }
  assert.match((await ask()).text, /"type":"end"/)
  assert.equal(upstream.requests.length, 1)

  await cluster.pause()
  // The budget cannot be read, so the call is refused rather than let through unmetered.
  const refused = await ask()
  assert.equal(refused.status, 200)
  assert.match(refused.text, /"code":"UE_INDEX_FAILED"/)
  assert.equal(upstream.requests.length, 1)
  await cluster.resume()
})
