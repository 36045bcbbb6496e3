import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, type TestContext, test } from 'node:test'
import { openMetadataStore } from '../../src/db/open.js'
import type { StorageKey } from '../../src/shared/types.js'
import { startServer } from '../../src/standalone/serve.js'
import { runCli } from '../helpers/cli.js'
import { blob, png } from '../helpers/fixtures.js'
import { skipOrFail, startPostgresLane } from '../helpers/postgres.js'
import { tempDir } from '../helpers/temp-dir.js'

const ALICE = 'alice-orphans-token-0123456789'
const BOB = 'bob-orphans-token-01234567890'

interface Lane {
  name: string
  /** The environment of one deployment: its database, its data folder, its users. */
  env(t: TestContext): Promise<Record<string, string>>
}

const lanes: Lane[] = [
  {
    name: 'SQLite',
    env: async (t) => ({ UEDITOR_DATA_DIR: await tempDir(t, 'ueditor-orphans-') }),
  },
]
const pgLane = await startPostgresLane()
if ('unavailable' in pgLane)
  test('runs the orphan tests against a real PostgreSQL cluster', (t) =>
    skipOrFail(t, pgLane.unavailable))
else {
  const { cluster } = pgLane
  after(() => cluster.stop())
  lanes.push({
    name: 'PostgreSQL',
    env: async (t) => ({
      UEDITOR_DATA_DIR: await tempDir(t, 'ueditor-orphans-pg-'),
      UEDITOR_DATABASE_URL: await cluster.createDatabase(),
    }),
  })
}

const BASE_ENV = {
  UEDITOR_AUTH: 'tokens',
  UEDITOR_AUTH_TOKENS: `alice:${ALICE},bob:${BOB}`,
  UEDITOR_LOG_LEVEL: 'silent',
  UEDITOR_LIMIT_MIN_FREE_BYTES: '0',
}

/** One run of the standalone server on `env`, as the service would run; stopped after use. */
async function serve(env: Record<string, string>) {
  const server = await startServer({ env: { ...BASE_ENV, ...env, PORT: '0', HOST: '127.0.0.1' } })
  const as = (token: string) => ({ Authorization: `Bearer ${token}` })
  return {
    server,
    async upload(token: string, name: string, size = 4): Promise<string> {
      const form = new FormData()
      form.append('upfile', blob(png(size, size)), name)
      const res = await fetch(`${server.url}/ueditor?action=image`, {
        method: 'POST',
        body: form,
        headers: as(token),
      })
      const answer = (await res.json()) as { state: string; url: string }
      assert.equal(answer.state, 'SUCCESS', JSON.stringify(answer))
      return answer.url
    },
    async save(token: string, id: string, html: string) {
      const res = await fetch(`${server.url}/documents/${id}`, {
        method: 'PUT',
        headers: { ...as(token), 'Content-Type': 'text/html' },
        body: html,
      })
      assert.equal(res.status, 200, await res.clone().text())
      return (await res.json()) as { files: string[] }
    },
    async remove(token: string, id: string) {
      const res = await fetch(`${server.url}/documents/${id}`, {
        method: 'DELETE',
        headers: as(token),
      })
      assert.equal(res.status, 200)
    },
  }
}

const keyOf = (url: string) => url.slice('/uploads/'.length) as StorageKey

/** What the index and the disk say of the files, read beside the stopped server. */
async function indexOf(env: Record<string, string>) {
  const store = await openMetadataStore(
    env.UEDITOR_DATABASE_URL
      ? { driver: 'postgres', url: env.UEDITOR_DATABASE_URL, poolSize: 1 }
      : { driver: 'sqlite', file: join(env.UEDITOR_DATA_DIR as string, 'ueditor.db') },
  )
  try {
    return {
      indexed: async (url: string) => (await store.files.get(keyOf(url))) !== null,
      usage: (owner: string) => store.files.usage(owner),
      size: async (url: string) => (await store.files.get(keyOf(url)))?.size ?? 0,
      close: () => store.close(),
    }
  } catch (e) {
    await store.close()
    throw e
  }
}

const stored = (env: Record<string, string>, url: string) =>
  existsSync(join(env.UEDITOR_DATA_DIR as string, 'uploads', keyOf(url)))

const orphanLines = (stdout: string) =>
  [...stdout.matchAll(/^orphan: (\S+) \(/gm)].map((m) => `/uploads/${m[1]}`).sort()

for (const lane of lanes)
  describe(`orphaned files on ${lane.name}`, () => {
    test('an article using two of three uploads leaves the third an orphan after the grace, and --fix removes only it, its bytes and its quota', async (t) => {
      const env = await lane.env(t)
      // A library from before tracking: its files are never orphans.
      const before = await serve(env)
      const old = await before.upload(ALICE, 'old.png')
      await before.server.close()

      const on = { ...env, UEDITOR_DOCUMENTS_ENABLED: 'true' }
      const app = await serve(on)
      const [a, b, c] = [
        await app.upload(ALICE, 'a.png', 6),
        await app.upload(ALICE, 'b.png', 7),
        await app.upload(ALICE, 'c.png', 8),
      ]
      const saved = await app.save(
        ALICE,
        'post-1',
        `<p><img src="${a}"></p><p><a href="${b}">b</a></p>`,
      )
      assert.deepEqual(saved.files, [a, b].sort())
      await app.server.close()

      const young = await runCli(['files', 'orphans'], on)
      assert.equal(young.code, 0, young.stdout + young.stderr)
      assert.deepEqual(orphanLines(young.stdout), [], 'nothing is past the 7-day grace yet')
      assert.match(young.stdout, /^0 orphans stored since .+ and more than 7d ago\.$/m)

      const listed = await runCli(['files', 'orphans', '--grace', '0'], on)
      assert.equal(listed.code, 3, listed.stdout + listed.stderr)
      assert.deepEqual(orphanLines(listed.stdout), [c])
      assert.match(listed.stdout, /Run with --fix to remove them\./)
      // For cron: nothing at all when no orphan is left, the same report as without when some are.
      const quiet = await runCli(['files', 'orphans', '--quiet'], on)
      assert.deepEqual(quiet, { code: 0, stdout: '', stderr: '' })
      const quietFound = await runCli(['files', 'orphans', '--quiet', '--grace', '0'], on)
      assert.equal(quietFound.code, 3)
      assert.equal(quietFound.stdout, listed.stdout)

      const index = await indexOf(on)
      const usage = await index.usage('alice')
      const cSize = await index.size(c)
      await index.close()
      assert.ok(cSize > 0)

      const fixed = await runCli(['files', 'orphans', '--fix', '--grace', '0'], on)
      assert.equal(fixed.code, 0, fixed.stdout + fixed.stderr)
      assert.match(fixed.stdout, new RegExp(`^orphan: ${keyOf(c)} \\(.*\\): removed$`, 'm'))
      assert.match(fixed.stdout, new RegExp(`; 1 removed \\(${cSize} bytes\\)\\.`))

      const after = await indexOf(on)
      try {
        assert.equal(await after.indexed(c), false)
        assert.equal(stored(on, c), false)
        for (const kept of [old, a, b]) {
          assert.equal(await after.indexed(kept), true, kept)
          assert.equal(stored(on, kept), true, kept)
        }
        assert.equal(await after.usage('alice'), usage - cSize)
      } finally {
        await after.close()
      }
      const again = await runCli(['files', 'orphans', '--grace', '0'], on)
      assert.equal(again.code, 0)
      assert.deepEqual(orphanLines(again.stdout), [])
    })

    test('a file two documents use survives the delete of one and becomes an orphan with the other', async (t) => {
      const env = { ...(await lane.env(t)), UEDITOR_DOCUMENTS_ENABLED: 'true' }
      const app = await serve(env)
      t.after(() => app.server.close())
      const shared = await app.upload(ALICE, 'shared.png')
      const own = await app.upload(ALICE, 'own.png')
      await app.save(ALICE, 'one', `<img src="${shared}"><img src="${own}">`)
      await app.save(ALICE, 'two', `<p style="background-image:url(${shared})">x</p>`)
      const listed = await fetch(
        `${app.server.url}/ueditor?action=listImage&document=one&start=0&size=10`,
        {
          headers: { Authorization: `Bearer ${ALICE}` },
        },
      )
      const list = (await listed.json()) as { total: number; list: { url: string }[] }
      assert.equal(list.total, 2)
      assert.deepEqual(list.list.map((e) => e.url).sort(), [own, shared].sort())
      await app.remove(ALICE, 'two')
      const kept = await runCli(['files', 'orphans', '--grace', '0'], env)
      assert.deepEqual(orphanLines(kept.stdout), [])
      await app.remove(ALICE, 'one')
      const both = await runCli(['files', 'orphans', '--grace', '0'], env)
      assert.deepEqual(orphanLines(both.stdout), [own, shared].sort())
    })

    test('turning tracking on never orphans an existing library, and without tracking nothing is one', async (t) => {
      const env = await lane.env(t)
      const off = await serve(env)
      const files = [await off.upload(ALICE, 'x.png'), await off.upload(BOB, 'y.png')]
      await off.server.close()
      const never = await runCli(['files', 'orphans', '--fix', '--grace', '0'], env)
      assert.equal(never.code, 0, never.stderr)
      assert.match(never.stdout, /Document tracking has never been on/)
      const quietNever = await runCli(['files', 'orphans', '--quiet'], env)
      assert.deepEqual(quietNever, { code: 0, stdout: '', stderr: '' })

      const on = { ...env, UEDITOR_DOCUMENTS_ENABLED: 'true' }
      const first = await serve(on)
      await first.server.close()
      // A second start (another node, a restart) keeps the first start's line.
      const second = await serve(on)
      const fresh = await second.upload(BOB, 'z.png')
      await second.server.close()
      const out = await runCli(['files', 'orphans', '--fix', '--grace', '0'], on)
      assert.equal(out.code, 0, out.stderr)
      assert.deepEqual(orphanLines(out.stdout), [fresh])
      for (const file of files) assert.equal(stored(on, file), true, file)
    })
  })
