import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openMetadataStore } from '../../src/db/open.js'
import type { StorageKey } from '../../src/shared/types.js'
import { startServer } from '../../src/standalone/serve.js'
import { runCli } from '../helpers/cli.js'
import { blob, png } from '../helpers/fixtures.js'
import { skipOrFail, startPostgresLane } from '../helpers/postgres.js'
import { tempDir } from '../helpers/temp-dir.js'
import { after, describe, type TestContext, test } from '../helpers/test.js'

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

/**
 * The forms docs/documents.md lists of an address that keeps a stored file, as an article may
 * hold them (a block copied from another article, content migrated with absolute URLs, the
 * default first run at 127.0.0.1:8080), built from the URL an upload answered (`/uploads/<key>`)
 * and the server's own origin (`http://127.0.0.1:<port>`).
 */
const REFERENCE_FORMS: [string, (key: string, origin: string) => string][] = [
  ['as handed out', (key) => `/uploads/${key}`],
  ['absolute, on the host with its port', (key, origin) => `${origin}/uploads/${key}`],
  [
    'on another name of the host',
    (key, origin) => `${origin.replace('127.0.0.1', 'localhost')}/uploads/${key}`,
  ],
  ['in capitals', (key, origin) => `${origin.toUpperCase()}/uploads/${key}`],
  [
    'protocol-relative, with the port',
    (key, origin) => `${origin.slice('http:'.length)}/uploads/${key}`,
  ],
  ['on any other host', (key) => `https://cdn.example.net/uploads/${key}`],
  ['with backslashes', (key) => `\\uploads\\${key.replaceAll('/', '\\')}`],
  [
    'protocol-relative with backslashes',
    (key, origin) => `\\\\${new URL(origin).host}\\uploads\\${key}`,
  ],
  ['a scheme and one slash', (key) => `http:/uploads/${key}`],
  ['page-relative', (key) => `uploads/${key}`],
  ['page-relative with dot segments', (key) => `./../uploads/${key}`],
  ['under a page path', (key) => `/posts/12/uploads/${key}`],
  ['with a query and a fragment', (key) => `/uploads/${key}?v=2#top`],
  ['percent-encoded', (key) => `/uploads/${encodeURIComponent(key).replace('i', '%69')}`],
  ['with a tab and a newline', (key) => `/upl\toads/${key.replace('/', '/\n')}`],
  ['in a CSS `url()` of a `style`, with a port', (key, origin) => `${origin}/uploads/${key}`],
]

/** The first cells of the table of forms in docs/documents.md. */
function documentedForms(): string[] {
  const docs = readFileSync(
    // Tests run from packages/server/dist/tests/standalone.
    fileURLToPath(new URL('docs/documents.md', new URL('../../../../../', import.meta.url))),
    'utf8',
  )
  const table = docs.slice(docs.indexOf('| Form | Example |'))
  return [...table.slice(0, table.indexOf('\n\n')).matchAll(/^\| ([^|]+) \|/gm)]
    .map((m) => (m[1] as string).trim())
    .slice(2)
}

describe('what keeps a stored file on SQLite', () => {
  test('the forms tested are the forms docs/documents.md lists, in its order', () => {
    const documented = documentedForms()
    assert.equal(documented.length, REFERENCE_FORMS.length, documented.join('\n'))
    for (const [n, [name]] of REFERENCE_FORMS.entries())
      assert.ok(documented[n]?.startsWith(name), `${documented[n]} / ${name}`)
  })

  test('every address form docs/documents.md lists keeps its file through files orphans --fix, and the file is still served', {
    timeout: 180_000,
  }, async (t) => {
    const env = {
      UEDITOR_DATA_DIR: await tempDir(t, 'ueditor-orphan-forms-'),
      UEDITOR_DOCUMENTS_ENABLED: 'true',
    }
    const app = await serve(env)
    const origin = app.server.url
    const kept: string[] = []
    for (const [n, [name, form]] of REFERENCE_FORMS.entries()) {
      const url = await app.upload(ALICE, `form-${n}.png`)
      const address = form(keyOf(url), origin)
      const html =
        name === 'in a CSS `url()` of a `style`, with a port'
          ? `<p style="background-image:url(${address})">x</p>`
          : `<p><img src="${address.replaceAll('\t', '&#9;').replaceAll('\n', '&#10;')}"></p>`
      const saved = await app.save(ALICE, `form-${n}`, html)
      assert.deepEqual(saved.files, [url], `${name}: ${address}`)
      kept.push(url)
    }
    const unused = await app.upload(ALICE, 'unused.png')
    await app.server.close()

    const fixed = await runCli(['files', 'orphans', '--fix', '--grace', '0'], env)
    assert.equal(fixed.code, 0, fixed.stdout + fixed.stderr)
    assert.deepEqual(orphanLines(fixed.stdout), [unused], 'only the file no article uses goes')

    const again = await serve(env)
    t.after(() => again.server.close())
    for (const [n, url] of kept.entries()) {
      const res = await fetch(`${again.server.url}${url}`)
      assert.equal(res.status, 200, `${REFERENCE_FORMS[n]?.[0]}: ${url}`)
      await res.arrayBuffer()
    }
    assert.equal((await fetch(`${again.server.url}${unused}`)).status, 404)
  })

  test('a publicUrl changed after the article was saved keeps its files, also when the article is saved again with the former address', {
    timeout: 120_000,
  }, async (t) => {
    const dir = await tempDir(t, 'ueditor-orphan-cdn-')
    const env = { UEDITOR_DATA_DIR: dir, UEDITOR_DOCUMENTS_ENABLED: 'true' }
    const before = await serve({ ...env, UEDITOR_PUBLIC_URL: 'https://old-cdn.example/files/' })
    const url = await before.upload(ALICE, 'moved.png')
    assert.match(url, /^https:\/\/old-cdn\.example\/files\/image\//)
    const key = url.slice('https://old-cdn.example/files/'.length)
    const article = `<p><img src="${url}"></p>`
    assert.deepEqual((await before.save(ALICE, 'moved', article)).files, [url])
    await before.server.close()

    const moved = { ...env, UEDITOR_PUBLIC_URL: 'https://new-cdn.example/media/' }
    const sweep = async () => {
      const run = await runCli(['files', 'orphans', '--fix', '--grace', '0'], moved)
      assert.equal(run.code, 0, run.stdout + run.stderr)
      assert.deepEqual(orphanLines(run.stdout), [])
    }
    await sweep()
    const after = await serve(moved)
    t.after(() => after.server.close())
    assert.deepEqual((await after.save(ALICE, 'moved', article)).files, [
      `https://new-cdn.example/media/${key}`,
    ])
    await sweep()
    const res = await fetch(`${after.server.url}/uploads/${key}`)
    assert.equal(res.status, 200)
    await res.arrayBuffer()
  })

  test("an embed stays only when a browser loads it from this server's or the page's own host", {
    timeout: 60_000,
  }, async (t) => {
    const env = {
      UEDITOR_DATA_DIR: await tempDir(t, 'ueditor-orphan-embed-'),
      UEDITOR_DOCUMENTS_ENABLED: 'true',
    }
    const app = await serve(env)
    t.after(() => app.server.close())
    const url = await app.upload(ALICE, 'clip.png')
    const key = keyOf(url)
    const res = await fetch(`${app.server.url}/documents/embeds`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${ALICE}`, 'Content-Type': 'text/html' },
      body:
        `<embed src="${url}">` +
        `<embed src="https://evil.example/uploads/${key}">` +
        `<embed src="/\\evil.example/uploads/${key}">` +
        `<embed src="\\\\evil.example\\uploads\\${key.replaceAll('/', '\\')}">`,
    })
    const answer = (await res.json()) as { html: string; files: string[] }
    assert.equal(answer.html, `<embed src="${url}" />`)
    assert.deepEqual(answer.files, [url])
  })
})
