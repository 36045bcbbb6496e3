import assert from 'node:assert/strict'
import { mkdir, readFile, unlink, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3'
import { EDITOR_DEFAULTS } from '../../src/config/editor-defaults.js'
import { renderKey } from '../../src/ingest/keys.js'
import { startServer } from '../../src/standalone/serve.js'
import { runCli } from '../helpers/cli.js'
import { blob, PDF, png } from '../helpers/fixtures.js'
import { startS3rver } from '../helpers/s3rver.js'
import { tempDir } from '../helpers/temp-dir.js'
import { type TestContext, test } from '../helpers/test.js'

/** Where the files are, as the test sees them (not through the server). */
interface Place {
  put(key: string, bytes: Buffer): Promise<void>
  read(key: string): Promise<Buffer | null>
  remove(key: string): Promise<void>
  keys(): Promise<string[]>
}

/** Files the server never names so, each with its own bytes, put beside the server's own. */
function foreignFiles(uploadFolder: string): Map<string, Buffer> {
  return new Map(
    [
      // UEditor's PHP backend named uploads {time}{rand:6}: seconds and six digits.
      'image/20190101/1546300800123456.jpg',
      'ueditor/php/upload/image/20190101/1546300800123456.jpg',
      'other/readme.txt',
      'otherapp/readme.txt',
      'image/20261126/notes.txt',
      `${uploadFolder}/Thumbs.db`,
      `${uploadFolder}/notes.txt`,
    ].map((key) => [key, Buffer.from(`not ours: ${key}\n`)]),
  )
}

/**
 * Two uploads through a real server, then foreign files in the same folders (or bucket), one
 * object named as an upload but without a row, and one row whose object is gone; `files
 * reconcile --fix` must delete only the last two kinds and keep every foreign file.
 */
async function reconcileBesideForeignFiles(
  t: TestContext,
  env: Record<string, string>,
  place: Place,
  extraForeign: Map<string, Buffer> = new Map(),
): Promise<void> {
  const server = await startServer({
    env: { ...env, UEDITOR_AUTH: 'none', PORT: '0', HOST: '127.0.0.1' },
  })
  t.after(() => server.close())
  const upload = async (name: string, bytes: Buffer, action: string) => {
    const form = new FormData()
    form.append(action === 'image' ? 'upfile' : 'file', blob(bytes), name)
    const res = await fetch(`${server.url}/ueditor?action=${action}`, {
      method: 'POST',
      body: form,
    })
    const body = (await res.json()) as { state: string; url: string }
    assert.equal(body.state, 'SUCCESS', JSON.stringify(body))
    return body.url.slice('/uploads/'.length)
  }
  const kept = await upload('kept.png', png(8, 8), 'image')
  const lost = await upload('lost.pdf', PDF, 'file')

  const foreign = new Map([...foreignFiles(dirname(kept)), ...extraForeign])
  for (const [key, bytes] of foreign) await place.put(key, bytes)
  const orphan = renderKey(EDITOR_DEFAULTS.imagePathFormat, '.png', new Date(2026, 0, 2))
  await place.put(orphan, png(2, 2))
  await place.remove(lost)

  const report = await runCli(['files', 'reconcile'], env)
  assert.equal(report.code, 3, report.stdout + report.stderr)
  for (const key of foreign.keys())
    assert.match(report.stdout, new RegExp(`^foreign object: ${literal(key)} \\(`, 'm'), key)
  assert.match(report.stdout, new RegExp(`^object without row: ${literal(orphan)} \\(`, 'm'))
  assert.match(report.stdout, new RegExp(`^row without object: ${literal(lost)} \\(`, 'm'))

  // A bare number is seconds, as in every duration setting: both mismatches are younger than that.
  const young = await runCli(['files', 'reconcile', '--fix', '--grace', '3600'], env)
  assert.equal(young.code, 3, young.stdout + young.stderr)
  assert.notEqual(await place.read(orphan), null, 'an object younger than the grace is kept')

  const fixed = await runCli(['files', 'reconcile', '--fix', '--grace', '0'], env)
  assert.equal(fixed.code, 0, fixed.stdout + fixed.stderr)
  for (const key of foreign.keys())
    assert.match(
      fixed.stdout,
      new RegExp(
        `^foreign object: ${literal(key)} \\(.*\\): kept: not a name this server gives$`,
        'm',
      ),
    )
  assert.match(
    fixed.stdout,
    new RegExp(
      `1 object without a row, 1 row without an object, ${foreign.size} foreign objects left alone; 2 fixed\\.`,
    ),
  )
  for (const [key, bytes] of foreign) assert.deepEqual(await place.read(key), bytes, key)
  assert.equal(await place.read(orphan), null, 'the orphan named as an upload is deleted')
  assert.deepEqual(
    (await place.keys()).sort(),
    [kept, ...foreign.keys()].sort(),
    'only the orphan went',
  )

  const again = await runCli(['files', 'reconcile', '--fix', '--grace', '0', '--quiet'], env)
  assert.equal(again.code, 0, again.stderr)
  assert.equal(again.stdout, '', '--quiet says nothing when nothing is left to fix')
}

function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

test('files reconcile --fix on local disk keeps legacy, hand-placed and other apps’ files in the upload folders', async (t) => {
  const dataDir = await tempDir(t, 'ue-reconcile-local-')
  const root = join(dataDir, 'uploads')
  const env = { UEDITOR_DATA_DIR: dataDir, UEDITOR_LOG_LEVEL: 'warn' }
  await reconcileBesideForeignFiles(t, env, {
    async put(key, bytes) {
      await mkdir(dirname(join(root, key)), { recursive: true })
      await writeFile(join(root, key), bytes)
    },
    read: (key) => readFile(join(root, key)).catch(() => null),
    remove: (key) => unlink(join(root, key)),
    async keys() {
      const { readdir } = await import('node:fs/promises')
      const entries = await readdir(root, { recursive: true, withFileTypes: true })
      return entries
        .filter((e) => e.isFile())
        .map((e) => join(e.parentPath, e.name).slice(root.length + 1))
        .filter((k) => !k.startsWith('.incoming/'))
    },
  })
})

test('files reconcile --fix on an S3 bucket shared with another application deletes none of its objects', async (t) => {
  const s3 = await startS3rver()
  t.after(() => s3.close())
  const bucket = await s3.createBucket()
  const dataDir = await tempDir(t, 'ue-reconcile-s3-')
  // No storage.prefix: the server's keys and the other application's share the bucket's root.
  const env = {
    UEDITOR_DATA_DIR: dataDir,
    UEDITOR_LOG_LEVEL: 'warn',
    ...s3.storageEnv(bucket),
  }
  await reconcileBesideForeignFiles(
    t,
    env,
    {
      async put(key, bytes) {
        await s3.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes }))
      },
      async read(key) {
        try {
          const out = await s3.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))
          return Buffer.from(
            await (
              out.Body as { transformToByteArray(): Promise<Uint8Array> }
            ).transformToByteArray(),
          )
        } catch (e) {
          if ((e as { name?: string }).name === 'NoSuchKey') return null
          throw e
        }
      },
      async remove(key) {
        await s3.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }))
      },
      async keys() {
        const out = await s3.client.send(new ListObjectsV2Command({ Bucket: bucket }))
        return (out.Contents ?? []).map((o) => o.Key as string)
      },
    },
    // Names no key may have at all (a space, a leading dot) are foreign too.
    new Map([
      ['otherapp/with space.txt', Buffer.from('x')],
      ['.well-known/thing', Buffer.from('y')],
    ]),
  )
})

test('files reconcile leaves the objects of an upload in progress alone and removes those of an upload that is gone', async (t) => {
  const s3 = await startS3rver()
  t.after(() => s3.close())
  const bucket = await s3.createBucket()
  const dataDir = await tempDir(t, 'ue-reconcile-tus-')
  const env = { UEDITOR_DATA_DIR: dataDir, UEDITOR_LOG_LEVEL: 'warn', ...s3.storageEnv(bucket) }
  const server = await startServer({
    env: { ...env, UEDITOR_AUTH: 'none', PORT: '0', HOST: '127.0.0.1' },
  })
  t.after(() => server.close())
  const created = await fetch(`${server.url}/tus`, {
    method: 'POST',
    headers: {
      'Tus-Resumable': '1.0.0',
      'Upload-Length': String(PDF.length * 2),
      'Upload-Metadata': `filename ${Buffer.from('a.pdf').toString('base64')}`,
    },
  })
  assert.equal(created.status, 201)
  const live = (created.headers.get('location') ?? '').split('/').pop() as string
  const keys = async () =>
    ((await s3.client.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map(
      (o) => o.Key as string,
    )
  assert.ok((await keys()).includes(`.tus/${live}.info`), (await keys()).join())
  const gone = `.tus/${'g'.repeat(22)}.info`
  await s3.client.send(new PutObjectCommand({ Bucket: bucket, Key: gone, Body: 'x' }))

  const report = await runCli(['files', 'reconcile'], env)
  assert.equal(report.code, 3, report.stdout + report.stderr)
  assert.match(
    report.stdout,
    new RegExp(`^unfinished upload without row: ${literal(gone)} \\(`, 'm'),
  )
  assert.doesNotMatch(report.stdout, new RegExp(literal(live)))
  assert.match(
    report.stdout,
    /1 object of uploads still in progress, 1 object of abandoned uploads/,
  )

  const fixed = await runCli(['files', 'reconcile', '--fix', '--grace', '0'], env)
  assert.equal(fixed.code, 0, fixed.stdout + fixed.stderr)
  assert.deepEqual(await keys(), [`.tus/${live}.info`])
})

test('files reconcile leaves the pending object of a direct upload in progress alone and removes one whose upload is gone', async (t) => {
  const s3 = await startS3rver()
  t.after(() => s3.close())
  const bucket = await s3.createBucket()
  const dataDir = await tempDir(t, 'ue-reconcile-direct-')
  const env = { UEDITOR_DATA_DIR: dataDir, UEDITOR_LOG_LEVEL: 'warn', ...s3.storageEnv(bucket) }
  const server = await startServer({
    env: { ...env, UEDITOR_AUTH: 'none', PORT: '0', HOST: '127.0.0.1' },
  })
  t.after(() => server.close())
  // A simple upload whose bytes arrived but whose result nobody asked for yet.
  const params = await fetch(
    `${server.url}/s3/s3/params?filename=a.pdf&type=application%2Fpdf&metadata%5Bcategory%5D=file`,
  )
  assert.equal(params.status, 200)
  const { url, fields } = (await params.json()) as { url: string; fields: Record<string, string> }
  const form = new FormData()
  for (const [name, value] of Object.entries(fields)) form.append(name, value)
  form.append('file', new Blob([new Uint8Array(PDF)]), 'a.pdf')
  assert.ok((await fetch(url, { method: 'POST', body: form })).status < 300)
  const live = fields.key as string
  const gone = `.direct/${'g'.repeat(22)}`
  await s3.client.send(new PutObjectCommand({ Bucket: bucket, Key: gone, Body: 'x' }))

  const report = await runCli(['files', 'reconcile'], env)
  assert.equal(report.code, 3, report.stdout + report.stderr)
  assert.match(
    report.stdout,
    new RegExp(`^unfinished upload without row: ${literal(gone)} \\(`, 'm'),
  )
  assert.doesNotMatch(report.stdout, new RegExp(literal(live)))
  assert.match(
    report.stdout,
    /1 object of uploads still in progress, 1 object of abandoned uploads/,
  )

  const fixed = await runCli(['files', 'reconcile', '--fix', '--grace', '0'], env)
  assert.equal(fixed.code, 0, fixed.stdout + fixed.stderr)
  const keys = (await s3.client.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []
  assert.deepEqual(
    keys.map((o) => o.Key),
    [live],
  )
})
