import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, readdir, rm, statfs, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { ServerConfigInput } from '../../src/config/schema.js'
import { ALICE, TOKENS } from '../helpers/auth.js'
import { blob, PDF, png } from '../helpers/fixtures.js'
import { jsonLog } from '../helpers/json-log.js'
import { originImages, startOriginServer } from '../helpers/origin-server.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { type TestContext, test } from '../helpers/test.js'
import { type TusAnswer, tusFetch, tusMetadata } from '../helpers/tus.js'

const run = promisify(execFile)

/** What each test uploads: far more than a filled volume keeps free. */
const SIZE = 1024 * 1024
/** What a filled volume keeps free. */
const LEFT = 100 * 1024
/** Every answer arrives within this, or the test fails (no hang). */
const ANSWER_WITHIN_MS = 20_000
const AUTH = { Authorization: `Bearer ${ALICE}` }
const PDF_FILE = { filename: 'report.pdf', category: 'file' }

/** A 1 MiB PDF: its first bytes are a PDF's, the rest padding. */
const DOCUMENT = Buffer.concat([PDF, Buffer.alloc(SIZE - PDF.length, 0x20)])
/** A PNG of noise a little over 1 MiB, which re-encodes to about as much. */
const IMAGE = png(600, 600, { noise: true })

/**
 * A 4 MiB tmpfs of its own, unmounted when the test ends. It needs root: without it the test
 * is skipped, except on CI, where it fails.
 */
async function smallVolume(t: TestContext, name: string): Promise<string | null> {
  const unavailable = (reason: string) => {
    if (process.env.CI === 'true') throw new Error(`the full-disk tests must run on CI: ${reason}`)
    t.skip(reason)
    return null
  }
  if (process.getuid?.() !== 0) return unavailable('mounting a small tmpfs volume needs root')
  const dir = await mkdtemp(join(tmpdir(), `ue-full-${name}-`))
  try {
    await run('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir])
  } catch (e) {
    await rm(dir, { recursive: true, force: true })
    return unavailable(`mount -t tmpfs failed: ${(e as Error).message}`)
  }
  t.after(async () => {
    // Lazy: the server may still hold a file open while the hooks run.
    await run('umount', ['-l', dir]).catch(() => {})
    await rm(dir, { recursive: true, force: true })
  })
  return dir
}

interface Volumes {
  /** The volume holding the storage root (`files/`). */
  data: string
  /** The volume holding the temp spool (`tmp/`). */
  spool: string
}

async function volumes(t: TestContext): Promise<Volumes | null> {
  const data = await smallVolume(t, 'data')
  const spool = data && (await smallVolume(t, 'spool'))
  return data && spool ? { data, spool } : null
}

/** Leaves about `free` bytes on `volume`, held by a file of its own. */
async function fill(volume: string, free: number): Promise<void> {
  const filler = join(volume, 'filler')
  await rm(filler, { force: true })
  const s = await statfs(volume)
  await writeFile(filler, Buffer.alloc(Math.max(0, s.bavail * s.bsize - free)))
}

/** Every file on the volume but the filler, relative paths. */
async function contents(volume: string): Promise<string[]> {
  const entries = await readdir(volume, { recursive: true, withFileTypes: true })
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(volume.length + 1))
    .filter((name) => name !== 'filler')
    .sort()
}

async function startOn(t: TestContext, v: Volumes, config: ServerConfigInput = {}) {
  const log = jsonLog('info')
  const srv = await startTestServer(
    t,
    {
      auth: { tokens: TOKENS },
      storage: { driver: 'local', root: join(v.data, 'files') },
      uploads: { tempDir: join(v.spool, 'tmp') },
      // Off, so the upload gets under way and the disk runs out in the middle of it.
      limits: { minFreeBytes: 0 },
      ...config,
    },
    { logger: log.logger },
  )
  return { srv, log }
}

/** `ueditor_dependency_errors_total` of one dependency, summed over its operations. */
async function dependencyErrors(srv: TestServer, dependency: string): Promise<number> {
  const text = await (await fetch(`${srv.url}/metrics`)).text()
  let sum = 0
  for (const line of text.split('\n')) {
    const match = /^ueditor_dependency_errors_total\{([^}]*)\} (\d+)/.exec(line)
    if (match?.[1]?.includes(`dependency="${dependency}"`)) sum += Number(match[2])
  }
  return sum
}

/**
 * What a refusal for a full disk must leave: one line at warn or error naming the code, the
 * step that ran out of space, the errno and the folder; one more storage failure counted; and
 * the volumes as they were.
 */
async function assertFull(o: {
  srv: TestServer
  log: ReturnType<typeof jsonLog>
  v: Volumes
  before: { data: string[]; spool: string[]; failures: number }
  at: string
  folder: string
  dependency?: string
}): Promise<void> {
  const line = o.log.records.find((r) => r.code === 'UE_STORAGE_FULL' && r.at === o.at)
  assert.ok(
    line,
    `a log line with code UE_STORAGE_FULL at ${o.at}: ${JSON.stringify(o.log.records.slice(-4))}`,
  )
  assert.ok(
    ['warn', 'error'].includes(String(line.level)),
    `at warn or error: ${JSON.stringify(line)}`,
  )
  assert.ok(line.errno === 'ENOSPC' || line.errno === 'SQLITE_FULL', JSON.stringify(line))
  assert.ok(String(line.folder).startsWith(o.folder), JSON.stringify(line))
  assert.equal(
    await dependencyErrors(o.srv, o.dependency ?? 'storage'),
    o.before.failures + 1,
    `counted once in ueditor_dependency_errors_total{dependency="${o.dependency ?? 'storage'}"}`,
  )
  assert.deepEqual(await contents(o.v.data), o.before.data, 'nothing new on the data volume')
  assert.deepEqual(await contents(o.v.spool), o.before.spool, 'nothing new on the spool volume')
}

async function snapshot(srv: TestServer, v: Volumes, dependency = 'storage') {
  return {
    data: await contents(v.data),
    spool: await contents(v.spool),
    failures: await dependencyErrors(srv, dependency),
  }
}

async function upload(srv: TestServer, action: string, bytes: Buffer, name: string) {
  const form = new FormData()
  form.append(action === 'file' ? 'file' : 'upfile', blob(bytes), name)
  const res = await fetch(srv.action(action), {
    method: 'POST',
    headers: AUTH,
    body: form,
    signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
  })
  assert.equal(res.status, 200, 'the editor answers refusals with 200 and a state')
  return (await res.json()) as { state: string; code?: string; url?: string }
}

/** A creation of an upload of `length` bytes; with `body`, a creation-with-upload. */
function tusCreate(
  srv: TestServer,
  metadata: Record<string, string>,
  o: { length: number; body?: Buffer },
) {
  const { body } = o
  return tusFetch(`${srv.url}${srv.ue.config.routes.tus}`, {
    method: 'POST',
    headers: {
      ...AUTH,
      'Upload-Length': String(o.length),
      'Upload-Metadata': tusMetadata(metadata),
      ...(body ? { 'Content-Type': 'application/offset+octet-stream' } : {}),
    },
    ...(body ? { body } : {}),
  })
}

function tusPatch(url: string, body: Buffer) {
  return tusFetch(url, {
    method: 'PATCH',
    headers: {
      ...AUTH,
      'Upload-Offset': '0',
      'Content-Type': 'application/offset+octet-stream',
    },
    body,
  })
}

function locationOf(srv: TestServer, created: TusAnswer): string {
  const location = created.headers.get('location')
  assert.ok(location, `a Location: ${created.status} ${created.text}`)
  return new URL(location, `${srv.url}/`).href
}

function assertTusFull(answer: TusAnswer): void {
  assert.equal(answer.status, 507, answer.text)
  assert.equal(answer.json().error?.code, 'UE_STORAGE_FULL', answer.text)
  assert.equal(answer.headers.get('tus-resumable'), '1.0.0')
}

for (const [action, bytes, name] of [
  ['file', DOCUMENT, 'report.pdf'],
  ['image', IMAGE, 'photo.png'],
] as const) {
  test(`a multipart ${action} upload that fills the temp folder is refused with UE_STORAGE_FULL, logged and counted, and leaves no spool file`, async (t) => {
    const v = await volumes(t)
    if (!v) return
    const { srv, log } = await startOn(t, v)
    await fill(v.spool, LEFT)
    const before = await snapshot(srv, v)
    const answer = await upload(srv, action, bytes, name)
    assert.equal(answer.code, 'UE_STORAGE_FULL', JSON.stringify(answer))
    assert.equal(answer.state, '服务器存储空间不足')
    await assertFull({ srv, log, v, before, at: 'spool', folder: join(v.spool, 'tmp') })
  })

  test(`a multipart ${action} upload that fills the storage volume is refused with UE_STORAGE_FULL, logged and counted, and leaves no .part file`, async (t) => {
    const v = await volumes(t)
    if (!v) return
    const { srv, log } = await startOn(t, v)
    await fill(v.data, LEFT)
    const before = await snapshot(srv, v)
    const answer = await upload(srv, action, bytes, name)
    assert.equal(answer.code, 'UE_STORAGE_FULL', JSON.stringify(answer))
    await assertFull({ srv, log, v, before, at: 'store', folder: join(v.data, 'files') })
    const listed = await fetch(srv.action(action === 'file' ? 'listFile' : 'listImage'), {
      headers: AUTH,
    })
    assert.equal(((await listed.json()) as { total?: number }).total ?? 0, 0, 'no index row')
  })
}

test('an image whose re-encoded copy does not fit in the temp folder is refused with UE_STORAGE_FULL and leaves neither copy', async (t) => {
  const v = await volumes(t)
  if (!v) return
  const { srv, log } = await startOn(t, v)
  // Room for the upload, not for its re-encoded copy beside it.
  await fill(v.spool, IMAGE.length + 300 * 1024)
  const before = await snapshot(srv, v)
  const answer = await upload(srv, 'image', IMAGE, 'photo.png')
  assert.equal(answer.code, 'UE_STORAGE_FULL', JSON.stringify(answer))
  await assertFull({ srv, log, v, before, at: 'image', folder: join(v.spool, 'tmp') })
})

test('a scrawl that fills the temp folder is refused with UE_STORAGE_FULL and leaves no spool file', async (t) => {
  const v = await volumes(t)
  if (!v) return
  const { srv, log } = await startOn(t, v)
  await fill(v.spool, LEFT)
  const before = await snapshot(srv, v)
  const res = await fetch(srv.action('scrawl'), {
    method: 'POST',
    headers: AUTH,
    body: new URLSearchParams({ upfile: IMAGE.toString('base64') }),
    signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
  })
  const answer = (await res.json()) as { code?: string }
  assert.equal(answer.code, 'UE_STORAGE_FULL', JSON.stringify(answer))
  await assertFull({ srv, log, v, before, at: 'spool', folder: join(v.spool, 'tmp') })
})

test('a remote image captured into a full temp folder is answered UE_STORAGE_FULL in its entry and leaves no spool file', async (t) => {
  const v = await volumes(t)
  if (!v) return
  const origin = await startOriginServer(t, { ...(await originImages()), png: IMAGE })
  const { srv, log } = await startOn(t, v, { catcher: { allowHosts: [origin.host] } })
  await fill(v.spool, LEFT)
  const before = await snapshot(srv, v)
  const source = origin.url('/a.png')
  const res = await fetch(srv.action('catch'), {
    method: 'POST',
    headers: AUTH,
    body: new URLSearchParams({ 'source[]': source }),
    signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
  })
  const answer = (await res.json()) as { list: { code?: string; source: string }[] }
  assert.equal(answer.list.length, 1)
  assert.equal(answer.list[0]?.code, 'UE_STORAGE_FULL', JSON.stringify(answer))
  await assertFull({ srv, log, v, before, at: 'spool', folder: join(v.spool, 'tmp') })
})

test('a tus PATCH that fills the storage volume is answered 507 UE_STORAGE_FULL and its upload is removed: no bytes, no record, no row', async (t) => {
  const v = await volumes(t)
  if (!v) return
  const { srv, log } = await startOn(t, v)
  await fill(v.data, LEFT)
  const before = await snapshot(srv, v)
  const created = await tusCreate(srv, PDF_FILE, { length: SIZE })
  assert.equal(created.status, 201, created.text)
  const url = locationOf(srv, created)
  assertTusFull(await tusPatch(url, DOCUMENT))
  await assertFull({ srv, log, v, before, at: 'tus', folder: join(v.data, 'files') })
  const head = await tusFetch(url, { method: 'HEAD', headers: AUTH })
  assert.equal(head.status, 404, 'the upload is gone, not left to resume on a full disk')
  const id = url.slice(url.lastIndexOf('/') + 1)
  const result = await fetch(srv.action('uploadresult', `&id=${id}`), { headers: AUTH })
  assert.equal(((await result.json()) as { code?: string }).code, 'UE_NOT_FOUND', 'no row')

  // A creation that carries the bytes is refused the same way.
  const withBody = await tusCreate(srv, PDF_FILE, { length: SIZE, body: DOCUMENT })
  assertTusFull(withBody)
  assert.deepEqual(await contents(v.data), before.data)
})

test('a tus image whose ending cannot copy it into a full temp folder is answered UE_STORAGE_FULL and leaves nothing', async (t) => {
  const v = await volumes(t)
  if (!v) return
  const { srv, log } = await startOn(t, v)
  await fill(v.spool, LEFT)
  const before = await snapshot(srv, v)
  const created = await tusCreate(
    srv,
    { filename: 'photo.png', category: 'image' },
    { length: IMAGE.length },
  )
  assert.equal(created.status, 201, created.text)
  // The bytes fit on the data volume; the ending copies an image into the temp folder.
  const ended = await tusPatch(locationOf(srv, created), IMAGE)
  assert.equal(ended.status, 200, ended.text)
  assert.equal(ended.json().code, 'UE_STORAGE_FULL', ended.text)
  await assertFull({ srv, log, v, before, at: 'spool', folder: join(v.spool, 'tmp') })
})

test('with the SQLite index on the full volume, an upload whose index row cannot be written is refused with UE_STORAGE_FULL and its stored file is removed', async (t) => {
  // One volume for everything, as with the default data folder: the spool's file is linked
  // into the storage root without a byte more, and the index row is what runs out of space.
  const data = await smallVolume(t, 'all')
  if (!data) return
  const v = { data, spool: data }
  const { srv, log } = await startOn(t, v, {
    storage: { driver: 'local', root: join(data, 'files') },
    uploads: { tempDir: join(data, 'tmp') },
    index: { driver: 'sqlite', file: join(data, 'ueditor.db') },
  })
  await fill(data, SIZE)
  const before = await snapshot(srv, v, 'database')
  const answer = await upload(srv, 'file', DOCUMENT, 'report.pdf')
  assert.equal(answer.code, 'UE_STORAGE_FULL', JSON.stringify(answer))
  const listed = await fetch(srv.action('listFile'), { headers: AUTH })
  assert.equal(((await listed.json()) as { total?: number }).total ?? 0, 0, 'no index row')
  await assertFull({ srv, log, v, before, at: 'index', folder: data, dependency: 'database' })
})

test('with limits.minFreeBytes on, an upload to a volume below it is refused with UE_STORAGE_FULL before its body is read', async (t) => {
  const v = await volumes(t)
  if (!v) return
  const { srv, log } = await startOn(t, v, { limits: { minFreeBytes: 512 * 1024 } })
  // An upload under way: below the floor its next PATCH is refused, and it is kept to resume.
  const created = await tusCreate(srv, PDF_FILE, { length: SIZE })
  assert.equal(created.status, 201, created.text)
  const url = locationOf(srv, created)
  for (const volume of [v.data, v.spool]) {
    await fill(volume, LEFT)
    const before = await snapshot(srv, v)
    const lines = log.records.length
    const answer = await upload(srv, 'file', DOCUMENT, 'report.pdf')
    assert.equal(answer.code, 'UE_STORAGE_FULL', JSON.stringify(answer))
    assertTusFull(await tusCreate(srv, PDF_FILE, { length: SIZE, body: DOCUMENT }))
    assertTusFull(await tusPatch(url, DOCUMENT))
    const head = await tusFetch(url, { method: 'HEAD', headers: AUTH })
    assert.equal(head.status, 200, head.text)
    assert.equal(head.headers.get('upload-offset'), '0')
    assert.deepEqual(await contents(v.data), before.data)
    assert.deepEqual(await contents(v.spool), before.spool)
    const line = log.records.slice(lines).find((r) => r.code === 'UE_STORAGE_FULL')
    assert.ok(line && line.level === 'warn', JSON.stringify(log.records.slice(lines)))
    assert.deepEqual(line.limit, { minFreeBytes: 512 * 1024 })
    await rm(join(volume, 'filler'))
  }
})

test('an upload into a temp folder that cannot be written is refused with UE_STORAGE_FAILED, logged and counted, not as a malformed form', async (t) => {
  const log = jsonLog('info')
  const srv = await startTestServer(t, { limits: { minFreeBytes: 0 } }, { logger: log.logger })
  // Gone after the start: the spool file cannot be opened.
  await rm(srv.ue.config.uploads.tempDir, { recursive: true })
  const before = await dependencyErrors(srv, 'storage')
  const answer = await upload(srv, 'file', PDF, 'small.pdf')
  assert.equal(answer.code, 'UE_STORAGE_FAILED', JSON.stringify(answer))
  const line = log.records.find((r) => r.code === 'UE_STORAGE_FAILED' && r.at === 'spool')
  assert.equal(line?.level, 'error', JSON.stringify(log.records.slice(-3)))
  assert.equal(await dependencyErrors(srv, 'storage'), before + 1)
})
