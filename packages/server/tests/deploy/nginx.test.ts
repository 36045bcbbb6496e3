import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { blob, png } from '../helpers/fixtures.js'
import { startTestServer } from '../helpers/start-server.js'

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p))
// Tests run from packages/server/dist/tests/deploy; the guide is at the repository's root.
const DEPLOY_MD = join(
  fileURLToPath(new URL('../../../../../', import.meta.url)),
  'docs',
  'deploy.md',
)

/** The nginx site exactly as docs/deploy.md gives it. */
function documentedSite(): string {
  const m = /```nginx\n([\s\S]*?)```/.exec(readFileSync(DEPLOY_MD, 'utf8'))
  assert.ok(m, 'docs/deploy.md has an nginx block')
  return m[1] as string
}

async function freePort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))
  const { port } = s.address() as { port: number }
  await new Promise((resolve) => s.close(resolve))
  return port
}

/** A minimal MP4 (an ftyp box) padded to `size` bytes. */
function mp4(size: number): Buffer {
  const head = Buffer.concat([
    Buffer.from([0, 0, 0, 0x18]),
    Buffer.from('ftypisom', 'ascii'),
    Buffer.from([0, 0, 2, 0]),
    Buffer.from('isomiso2', 'ascii'),
  ])
  return Buffer.concat([head, Buffer.alloc(size - head.length, 7)])
}

/**
 * Starts Debian's nginx with the documented site in front of `upstreamPort`: only the addresses
 * (loopback), the site root and the temp paths are changed. Locally a missing nginx skips with
 * the reason; with CI=true it is a failure.
 */
async function startNginx(t: TestContext, upstreamPort: number, siteRoot: string) {
  if (!NGINX) {
    const reason = 'nginx not found; install the Debian package "nginx"'
    if (process.env.CI) assert.fail(reason)
    t.skip(reason)
    return undefined
  }
  const dir = await mkdtemp(join(tmpdir(), 'ueditor-nginx-'))
  await chmod(dir, 0o755)
  const port = await freePort()
  const site = documentedSite()
    .replace('server 127.0.0.1:8080;', `server 127.0.0.1:${upstreamPort};`)
    .replace('listen 80;', `listen 127.0.0.1:${port};`)
    .replace('root /var/www/example;', `root ${siteRoot};`)
  assert.notEqual(site, documentedSite())
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
  for (const name of temp) await mkdir(join(dir, name))
  const conf = `${process.getuid?.() === 0 ? 'user root;\n' : ''}daemon off;
master_process on;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 64; }
http {
  include /etc/nginx/mime.types;
  access_log off;
${temp.map((n) => `  ${n}_temp_path ${dir}/${n};`).join('\n')}
${site}
}
`
  await writeFile(join(dir, 'nginx.conf'), conf)
  const child: ChildProcess = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr?.on('data', (c) => {
    stderr += c
  })
  t.after(async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r))
      child.kill('SIGQUIT')
      await exited
    }
    await rm(dir, { recursive: true, force: true })
  })
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 15_000
  for (;;) {
    if (child.exitCode !== null) assert.fail(`nginx exited: ${stderr}`)
    try {
      await fetch(`${url}/healthz`)
      break
    } catch {
      if (Date.now() > deadline) assert.fail(`nginx did not answer: ${stderr}`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  return url
}

async function siteRoot(t: TestContext): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'ueditor-www-'))
  await chmod(root, 0o755)
  t.after(() => rm(root, { recursive: true, force: true }))
  await mkdir(join(root, 'ueditor-plus'))
  await writeFile(join(root, 'index.html'), '<!doctype html><title>site</title>')
  await writeFile(join(root, 'ueditor-plus', 'ueditor.config.js'), 'window.UEDITOR_CONFIG = {}')
  return root
}

test('behind the documented nginx site: the page, an upload, its listing and byte ranges', async (t) => {
  const root = await siteRoot(t)
  const srv = await startTestServer(t)
  const url = await startNginx(t, Number(new URL(srv.url).port), root)
  if (!url) return
  assert.equal(await (await fetch(`${url}/`)).text(), '<!doctype html><title>site</title>')
  const editorFile = await fetch(`${url}/ueditor-plus/ueditor.config.js`)
  assert.equal(
    await editorFile.text(),
    'window.UEDITOR_CONFIG = {}',
    'served by nginx, not proxied',
  )
  assert.deepEqual(await (await fetch(`${url}/healthz`)).json(), { status: 'ok' })
  assert.equal(
    (await (await fetch(`${url}/ueditor?action=config`)).json()).imageActionName,
    'image',
  )

  const form = new FormData()
  form.append('upfile', blob(png(32, 32), 'image/png'), 'pasted.png')
  const stored = await (
    await fetch(`${url}/ueditor?action=image`, { method: 'POST', body: form })
  ).json()
  assert.equal(stored.state, 'SUCCESS')
  const listed = await (await fetch(`${url}/ueditor?action=listImage&start=0&size=20`)).json()
  assert.equal(listed.list[0].url, stored.url)

  const whole = await fetch(`${url}${stored.url}`)
  assert.equal(whole.status, 200)
  assert.equal(whole.headers.get('x-content-type-options'), 'nosniff')
  const bytes = Buffer.from(await whole.arrayBuffer())
  const part = await fetch(`${url}${stored.url}`, { headers: { Range: 'bytes=8-15' } })
  assert.equal(part.status, 206)
  assert.equal(part.headers.get('content-range'), `bytes 8-15/${bytes.length}`)
  assert.deepEqual(Buffer.from(await part.arrayBuffer()), bytes.subarray(8, 16))
})

test('behind the documented nginx site: a 12 MB video passes, and one over the editor limit is refused by the server', async (t) => {
  const root = await siteRoot(t)
  const srv = await startTestServer(t, { editor: { videoMaxSize: 16 * 1024 * 1024 } })
  const url = await startNginx(t, Number(new URL(srv.url).port), root)
  if (!url) return
  const big = mp4(12 * 1024 * 1024)
  const form = new FormData()
  form.append('file', blob(big, 'video/mp4'), 'clip.mp4')
  const stored = await (
    await fetch(`${url}/ueditor?action=video`, { method: 'POST', body: form })
  ).json()
  assert.equal(stored.state, 'SUCCESS', JSON.stringify(stored))
  assert.equal(stored.size, big.length)
  const tail = await fetch(`${url}${stored.url}`, { headers: { Range: 'bytes=-4' } })
  assert.equal(tail.status, 206)
  assert.equal(
    tail.headers.get('content-range'),
    `bytes ${big.length - 4}-${big.length - 1}/${big.length}`,
  )

  const tooBig = new FormData()
  tooBig.append('file', blob(mp4(20 * 1024 * 1024), 'video/mp4'), 'long.mp4')
  const refused = await fetch(`${url}/ueditor?action=video`, { method: 'POST', body: tooBig })
  assert.equal(refused.status, 200)
  assert.equal((await refused.json()).code, 'UE_FILE_TOO_LARGE')
  assert.deepEqual(await srv.storedFiles(), [stored.url.replace(/^\/uploads\//, '')])
})
