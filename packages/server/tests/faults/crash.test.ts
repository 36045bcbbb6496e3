import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdir, readdir, unlink, writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3'
import { EDITOR_DEFAULTS } from '../../src/config/editor-defaults.js'
import { renderKey } from '../../src/ingest/keys.js'
import { runCli } from '../helpers/cli.js'
import { blob, png } from '../helpers/fixtures.js'
import { multipartBody } from '../helpers/multipart.js'
import { startS3rver } from '../helpers/s3rver.js'
import { listeningUrl } from '../helpers/server-process.js'
import { tempDir } from '../helpers/temp-dir.js'
import { type TestContext, test } from '../helpers/test.js'

const MAIN = fileURLToPath(new URL('../../bin/ueditor-server.cjs', import.meta.url))

interface Standalone {
  child: ChildProcess
  url: string
}

/**
 * The binary as an operator runs it, open to anyone on purpose (the uploads carry no
 * credential); resolves once the banner names the address.
 */
async function startStandalone(t: TestContext, env: NodeJS.ProcessEnv): Promise<Standalone> {
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH, UEDITOR_AUTH: 'none', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  return { child, url: await listeningUrl(child, 20_000) }
}

async function upload(url: string, name: string): Promise<{ state: string; url: string }> {
  const form = new FormData()
  form.append('upfile', blob(png(12, 12), 'image/png'), name)
  const res = await fetch(`${url}/ueditor?action=image`, { method: 'POST', body: form })
  return res.json() as Promise<{ state: string; url: string }>
}

/** Uploads whose bodies stop halfway: the server is mid-upload when it is killed. */
function halfSentUploads(url: string, count: number): Promise<void>[] {
  return Array.from({ length: count }, (_, i) => {
    const { body, contentType } = multipartBody([
      { name: 'upfile', filename: `cut-${i}.png`, value: png(64, 64, { noise: true }) },
    ])
    return new Promise<void>((resolve) => {
      const req = request(`${url}/ueditor?action=image`, {
        method: 'POST',
        headers: { 'Content-Type': contentType, 'Content-Length': body.length },
      })
      req.on('error', () => resolve())
      req.on('response', () => resolve())
      req.write(body.subarray(0, Math.floor(body.length / 2)), () => resolve())
    })
  })
}

async function killHard(server: Standalone): Promise<number> {
  const pid = server.child.pid as number
  const exited = new Promise((resolve) => server.child.once('exit', resolve))
  server.child.kill('SIGKILL')
  await exited
  return pid
}

async function listed(url: string): Promise<string[]> {
  const res = await fetch(`${url}/ueditor?action=listImage&start=0&size=100`)
  const page = (await res.json()) as { list?: { url: string }[] }
  return (page.list ?? []).map((item) => item.url)
}

/**
 * kill -9 with uploads in flight, then what a crash between storing an object and adding its
 * row leaves (`plantOrphan`) and a row whose object is gone (`loseObject`); the next start and
 * `files reconcile` must clean every one of them.
 */
async function crashAndReconcile(
  t: TestContext,
  env: NodeJS.ProcessEnv,
  storage: {
    plantOrphan(key: string): Promise<void>
    loseObject(key: string): Promise<void>
    keys(): Promise<string[]>
  },
  afterKill: (deadPid: number) => Promise<void>,
): Promise<void> {
  const first = await startStandalone(t, env)
  const kept = await upload(first.url, 'kept.png')
  const lost = await upload(first.url, 'lost.png')
  assert.equal(kept.state, 'SUCCESS')
  assert.equal(lost.state, 'SUCCESS')
  const keyOf = (u: string) => u.slice('/uploads/'.length)

  const inFlight = halfSentUploads(first.url, 6)
  await Promise.all(inFlight)
  const deadPid = await killHard(first)
  await afterKill(deadPid)

  // Nothing of the cut uploads became an object.
  assert.deepEqual((await storage.keys()).sort(), [keyOf(kept.url), keyOf(lost.url)].sort())
  // Named as an upload is: only such a name is ever deleted by --fix.
  const orphan = renderKey(EDITOR_DEFAULTS.imagePathFormat, '.png', new Date(2020, 0, 1))
  await storage.plantOrphan(orphan)
  await storage.loseObject(keyOf(lost.url))

  const second = await startStandalone(t, env)
  const spools = await readdir(join(env.UEDITOR_DATA_DIR as string, 'tmp')).catch(() => [])
  assert.deepEqual(
    spools.filter((name) => name.includes(`-${deadPid}-`)),
    [],
    "the dead process's spool is gone",
  )
  assert.deepEqual((await listed(second.url)).sort(), [kept.url, lost.url].sort())

  const report = await runCli(['files', 'reconcile'], env)
  assert.equal(report.code, 3, report.stdout + report.stderr)
  assert.match(report.stdout, new RegExp(`object without row: ${orphan} \\(`))
  assert.match(report.stdout, new RegExp(`row without object: ${keyOf(lost.url)} \\(`))
  assert.match(report.stdout, /1 object without a row, 1 row without an object/)

  const young = await runCli(['files', 'reconcile', '--fix'], env)
  assert.equal(young.code, 3, 'within the default grace period of an hour nothing is removed')
  assert.match(young.stdout, /kept: younger than the grace period/)

  const fixed = await runCli(['files', 'reconcile', '--fix', '--grace', '0'], env)
  assert.equal(fixed.code, 0, fixed.stdout + fixed.stderr)
  assert.match(fixed.stdout, /2 fixed/)
  assert.deepEqual(await storage.keys(), [keyOf(kept.url)])
  assert.deepEqual(await listed(second.url), [kept.url])

  const clean = await runCli(['files', 'reconcile'], env)
  assert.equal(clean.code, 0, clean.stdout)
  assert.match(clean.stdout, /0 objects without a row, 0 rows without an object/)
  await killHard(second)
}

test('kill -9 during uploads on local disk leaves no visible partial file; the next start and files reconcile clean up', async (t) => {
  const dataDir = await tempDir(t, 'ue-crash-local-')
  const root = join(dataDir, 'uploads')
  const env = {
    UEDITOR_DATA_DIR: dataDir,
    PORT: '0',
    UEDITOR_LOG_LEVEL: 'warn',
    UEDITOR_IMAGES_ENABLED: 'false',
  }
  const walk = async (): Promise<string[]> => {
    const entries = await readdir(root, { recursive: true, withFileTypes: true })
    return entries
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name).slice(root.length + 1))
  }
  await crashAndReconcile(
    t,
    env,
    {
      async plantOrphan(key) {
        await mkdir(join(root, key, '..'), { recursive: true })
        await writeFile(join(root, key), png(4, 4))
      },
      loseObject: (key) => unlink(join(root, key)),
      keys: async () => (await walk()).filter((f) => !f.startsWith('.incoming/')),
    },
    async (deadPid) => {
      // What a kill in the middle of publishing leaves: an unfinished write in .incoming.
      await mkdir(join(root, '.incoming'), { recursive: true })
      await writeFile(join(root, `.incoming/${deadPid}-0123456789abcdef.part`), Buffer.alloc(100))
    },
  )
  assert.deepEqual(
    (await walk()).filter((f) => f.startsWith('.incoming/')),
    [],
    'the next start removed the unfinished write',
  )
})

test('kill -9 during uploads on S3 leaves no partial object; files reconcile finds and fixes the mismatches', async (t) => {
  const s3 = await startS3rver()
  t.after(() => s3.close())
  const bucket = await s3.createBucket()
  const dataDir = await tempDir(t, 'ue-crash-s3-')
  const env = {
    UEDITOR_DATA_DIR: dataDir,
    PORT: '0',
    UEDITOR_LOG_LEVEL: 'warn',
    UEDITOR_IMAGES_ENABLED: 'false',
    ...s3.storageEnv(bucket),
    UEDITOR_S3_PREFIX: 'site',
  }
  const full = (key: string) => `site/${key}`
  await crashAndReconcile(
    t,
    env,
    {
      async plantOrphan(key) {
        await s3.client.send(
          new PutObjectCommand({ Bucket: bucket, Key: full(key), Body: png(4, 4) }),
        )
      },
      async loseObject(key) {
        await s3.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: full(key) }))
      },
      async keys() {
        const out = await s3.client.send(new ListObjectsV2Command({ Bucket: bucket }))
        return (out.Contents ?? []).map((o) => (o.Key as string).slice('site/'.length))
      },
    },
    async () => {},
  )
})
