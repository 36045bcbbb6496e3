import assert from 'node:assert/strict'
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadConfig } from '../../src/config/load.js'
import { isUeError } from '../../src/shared/errors.js'
import { bannerText, isPublicBind } from '../../src/standalone/banner.js'
import { startServer } from '../../src/standalone/serve.js'
import { blob, png } from '../helpers/fixtures.js'
import { startTestServer } from '../helpers/start-server.js'
import { test } from '../helpers/test.js'

// Tests run from packages/server/dist/tests/http.
const ROOT = new URL('../../../../../', import.meta.url)

/** A site folder with a page, the editor's files, a dotfile, and a secret next to it. */
async function siteFixture(t: { after(fn: () => Promise<void>): void }) {
  const base = await mkdtemp(join(tmpdir(), 'ueditor-site-'))
  t.after(() => rm(base, { recursive: true, force: true }))
  const site = join(base, 'site')
  await mkdir(join(site, 'ueditor-plus', 'dialogs'), { recursive: true })
  await mkdir(join(site, '.git'))
  await writeFile(join(site, 'index.html'), '<!doctype html><title>page</title>')
  await writeFile(join(site, 'ueditor-plus', 'ueditor.all.js'), 'window.UE = {}')
  await writeFile(join(site, 'ueditor-plus', 'dialogs', 'index.html'), '<p>dialog</p>')
  await writeFile(join(site, '.env'), 'SECRET=1')
  await writeFile(join(site, '.git', 'config'), '[core]')
  await writeFile(join(base, 'secret.txt'), 'outside')
  await symlink(join(base, 'secret.txt'), join(site, 'link-out.txt'))
  await symlink(base, join(site, 'folder-out'))
  await symlink(join(site, 'index.html'), join(site, 'alias.html'))
  return { base, site }
}

/** Sends the path exactly as written (fetch would normalise `..` away). */
function rawGet(url: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/`, { path }, (res) => {
      let body = ''
      res.on('data', (c) => {
        body += c
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

test('the static folder serves the page at / and the editor files with their types, next to the endpoint', async (t) => {
  const { site } = await siteFixture(t)
  const srv = await startTestServer(t, { site: { dir: site } })
  const page = await fetch(`${srv.url}/`)
  assert.equal(page.status, 200)
  assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8')
  assert.equal(page.headers.get('x-content-type-options'), 'nosniff')
  assert.equal(await page.text(), '<!doctype html><title>page</title>')
  const js = await fetch(`${srv.url}/ueditor-plus/ueditor.all.js`)
  assert.equal(js.headers.get('content-type'), 'text/javascript; charset=utf-8')
  assert.equal(await js.text(), 'window.UE = {}')
  const folder = await fetch(`${srv.url}/ueditor-plus/dialogs?x=1`, { redirect: 'manual' })
  assert.equal(folder.status, 301)
  assert.equal(folder.headers.get('location'), '/ueditor-plus/dialogs/?x=1')
  assert.equal(await (await fetch(`${srv.url}/ueditor-plus/dialogs/`)).text(), '<p>dialog</p>')
  assert.equal((await fetch(`${srv.url}/alias.html`)).status, 200, 'a symlink inside the folder')
  const head = await fetch(`${srv.url}/index.html`, { method: 'HEAD' })
  assert.equal(head.headers.get('content-length'), '34')
  const again = await fetch(`${srv.url}/index.html`, {
    headers: { 'If-Modified-Since': head.headers.get('last-modified') ?? '' },
  })
  assert.equal(again.status, 304)
  assert.equal((await fetch(`${srv.url}/index.html`, { method: 'POST' })).status, 405)
  // The API keeps its paths.
  assert.equal((await (await fetch(srv.action('config'))).json()).imageActionName, 'image')
  assert.deepEqual(await (await fetch(`${srv.url}/healthz`)).json(), { status: 'ok' })
})

test('the static folder never serves outside itself: traversal, encoded slashes, symlinks out, dotfiles', async (t) => {
  const { site } = await siteFixture(t)
  const srv = await startTestServer(t, { site: { dir: site } })
  for (const path of [
    '/../secret.txt',
    '/%2e%2e/secret.txt',
    '/ueditor-plus/..%2f..%2fsecret.txt',
    '/ueditor-plus%2f..%2f..%2fsecret.txt',
    '/..%5csecret.txt',
    '/link-out.txt',
    '/folder-out/secret.txt',
    '/.env',
    '/.git/config',
    '/%2egit/config',
    '/index.html%00.png',
    '/nope.html',
  ]) {
    const res = await rawGet(srv.url, path)
    assert.equal(res.status, 404, path)
    assert.doesNotMatch(res.body, /outside|SECRET|core/, path)
  }
})

test('the static folder never serves the data folder, even when the data folder is inside it', async (t) => {
  const { site } = await siteFixture(t)
  const dataDir = join(site, 'data')
  const srv = await startServer({
    env: {},
    config: {
      logLevel: 'silent',
      dataDir,
      site: { dir: site },
      auth: { mode: 'none' },
      http: { host: '127.0.0.1', port: 0 },
    },
  })
  t.after(() => srv.close())
  const form = new FormData()
  form.append('upfile', blob(png(4, 4), 'image/png'), 'a.png')
  const stored = await (
    await fetch(`${srv.url}/ueditor?action=image`, { method: 'POST', body: form })
  ).json()
  assert.equal(stored.state, 'SUCCESS')
  assert.equal((await fetch(new URL(stored.url, srv.url))).status, 200, 'served by /uploads/')
  const key = String(stored.url).replace(/^\/uploads\//, '')
  for (const path of [
    '/data/ueditor.db',
    '/data/ueditor.db-wal',
    `/data/uploads/${key}`,
    '/data/',
    '/data/tmp/',
  ])
    assert.equal((await fetch(`${srv.url}${path}`)).status, 404, path)
  assert.equal((await fetch(`${srv.url}/index.html`)).status, 200)
})

test('a static folder inside the data folder, or missing, stops the start with a config error', async (t) => {
  const { base } = await siteFixture(t)
  for (const [dir, why] of [
    [join(base, 'data', 'site'), 'is the data folder or inside it; serve a folder of its own'],
    [join(base, 'missing'), 'folder not found'],
  ] as const) {
    await assert.rejects(
      startServer({
        env: {},
        config: {
          logLevel: 'silent',
          dataDir: join(base, 'data'),
          site: { dir },
          http: { port: 0 },
        },
      }),
      (e) =>
        isUeError(e) &&
        e.code === 'UE_CONFIG_INVALID' &&
        e.detail === `\n  - site.dir (${dir}): ${why}`,
    )
  }
})

test('UEDITOR_STATIC_DIR sets the folder, resolved against the working directory', () => {
  const config = loadConfig({ env: { UEDITOR_STATIC_DIR: 'public' }, cwd: '/srv/site' })
  assert.deepEqual(config.site, { dir: '/srv/site/public', index: 'index.html' })
  assert.deepEqual(loadConfig({ env: {} }).site, { index: 'index.html' })
})

test('the banner names the page, the endpoint, /healthz, /readyz, the data folder and the Word files the import takes', async (t) => {
  const { site } = await siteFixture(t)
  const srv = await startTestServer(t, { site: { dir: site } })
  const text = bannerText(srv, '9.9.9')
  const lines = text.split('\n')
  assert.equal(lines[0], `ueditor-server 9.9.9 listening on ${srv.url}`)
  assert.ok(lines.includes(`  page:                        ${srv.url}/ (from ${site})`), text)
  assert.ok(lines.includes(`  editor endpoint (serverUrl): ${srv.url}/ueditor`), text)
  assert.ok(lines.includes(`  resumable uploads (tus):     ${srv.url}/tus`), text)
  assert.ok(lines.includes(`  health:                      ${srv.url}/healthz`), text)
  assert.ok(lines.includes(`  ready:                       ${srv.url}/readyz`), text)
  assert.ok(lines.includes(`  data folder:                 ${srv.dataDir}`), text)
  assert.ok(
    lines.some((l) => /^ {2}word import: {17}\.docx( and \.doc \(| only: )/.test(l)),
    text,
  )
  assert.doesNotMatch(text, /warning/)
})

test('on a wildcard bind the banner shows a loopback URL, never 0.0.0.0, and warns', async (t) => {
  // Without auth a public bind refuses to start; an explicit `none` starts, with the warning.
  const srv = await startTestServer(t, {
    http: { host: '0.0.0.0', port: 0 },
    auth: { mode: 'none' },
  })
  const text = bannerText(srv, '1.0.0')
  const port = new URL(srv.url).port
  assert.doesNotMatch(text, /http:\/\/0\.0\.0\.0/)
  assert.match(
    text,
    new RegExp(`^ueditor-server 1\\.0\\.0 listening on http://127\\.0\\.0\\.1:${port}\\n`),
  )
  assert.match(
    text,
    /warning: listening on every address of this machine \(0\.0\.0\.0\): anyone who can reach it can upload files\.\n {2}Bind HOST=127\.0\.0\.1 behind a reverse proxy \(docs\/deploy\.md\), or firewall the port\.\n$/,
  )
})

test('only loopback binds count as private', () => {
  for (const host of ['127.0.0.1', '127.0.0.2', '::1', '[::1]', 'localhost'])
    assert.equal(isPublicBind(host), false, host)
  for (const host of ['0.0.0.0', '::', '192.168.1.10', '10.0.0.1', 'example.com'])
    assert.equal(isPublicBind(host), true, host)
})

test('the README shows the first-run page exactly as examples/site/index.html has it', async () => {
  const readme = await readFile(fileURLToPath(new URL('README.md', ROOT)), 'utf8')
  const firstRun = readme.slice(readme.indexOf('### First run'))
  const block = /\n( *)```html\n([\s\S]*?)\n\1```\n/.exec(firstRun)
  assert.ok(block, 'the first-run section shows the page')
  const indent = block[1] as string
  const shown = (block[2] as string)
    .split('\n')
    .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
    .join('\n')
  const page = await readFile(fileURLToPath(new URL('examples/site/index.html', ROOT)), 'utf8')
  assert.equal(`${shown}\n`, page)
})
