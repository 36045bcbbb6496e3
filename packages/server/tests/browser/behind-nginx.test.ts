import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import type { ServerConfigInput } from '../../src/config/schema.js'
import { launchChromium } from '../helpers/chromium.js'
import { MP4, png } from '../helpers/fixtures.js'
import { startDocumentedSite } from '../helpers/nginx.js'
import { startS3rver } from '../helpers/s3rver.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { type TestContext, test } from '../helpers/test.js'

const TOKEN = 'editor-token-0123456789abcdef'
const MB = 1024 * 1024

/**
 * The site's editor page, served by nginx from the site root: the upload helper from the
 * server's loader bundle, called as UEditor Plus calls `uploadServiceUpload`, and a save of the
 * article to the documents API, all on the page's own origin through the documented site.
 */
const EDITOR_PAGE = `<!doctype html><meta charset="utf-8"><title>editor page</title>
<script src="/materials/loaders.iife.js"></script>
<script>
window.site = {
  upload(type, base64, name, mime, extra) {
    const upload = UEditorBackendLoaders.uploadService(Object.assign({ serverUrl: '/ueditor', token: ${JSON.stringify(TOKEN)} }, extra))
    const file = new File([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], name, { type: mime, lastModified: 1 })
    return new Promise((resolve) =>
      upload(type, file, {
        progress() {},
        success: (res) => resolve(res),
        error: (message) => resolve({ state: 'error', message }),
      }, { from: type === 'image' ? 'upload' : type }))
  },
  async shown(src) {
    const img = new Image()
    img.src = src
    await img.decode()
    return img.naturalWidth
  },
  async save(id, html) {
    const res = await fetch('/documents/' + encodeURIComponent(id), {
      method: 'PUT',
      headers: { Authorization: 'Bearer ${TOKEN}', 'Content-Type': 'text/html; charset=utf-8' },
      body: html,
    })
    return { status: res.status, body: await res.text() }
  },
}
</script>`

interface Result {
  state: string
  url?: string
  message?: string
}

/** The server as the recipe runs it behind nginx: a credential per editor, nginx trusted. */
function behindNginx(extra: ServerConfigInput = {}): ServerConfigInput {
  return {
    ...extra,
    auth: { tokens: [`alice:${TOKEN}`] },
    http: { trustProxy: ['loopback'] },
    documents: { enabled: true },
    limits: { minFreeBytes: 0 },
  }
}

/** The documented site in front of `srv`, its root holding the editor page. */
async function site(t: TestContext, srv: TestServer): Promise<string | undefined> {
  const root = await mkdtemp(join(tmpdir(), 'ueditor-www-'))
  await chmod(root, 0o755)
  t.after(() => rm(root, { recursive: true, force: true }))
  await writeFile(join(root, 'index.html'), EDITOR_PAGE)
  const nginx = await startDocumentedSite(t, { upstreams: [Number(new URL(srv.url).port)], root })
  return nginx?.url
}

/** Chromium on the site's page, with every request the page sends written down. */
async function editorPage(t: TestContext, url: string) {
  const browser = await launchChromium(t)
  if (!browser) return undefined
  const page = await browser.newPage()
  const sent: string[] = []
  page.on('request', (r) => {
    const at = new URL(r.url())
    const where = at.origin === url ? '' : 'elsewhere '
    sent.push(`${where}${r.method()} ${at.pathname}`)
  })
  await page.goto(`${url}/`)
  return { page, sent }
}

function upload(
  page: Page,
  type: string,
  bytes: Buffer,
  name: string,
  mime: string,
  extra: Record<string, unknown> = {},
): Promise<Result> {
  return page.evaluate(
    ([type, base64, name, mime, extra]) =>
      (window as unknown as { site: { upload(...a: unknown[]): Promise<Result> } }).site.upload(
        type,
        base64,
        name,
        mime,
        extra,
      ),
    [type, bytes.toString('base64'), name, mime, extra] as const,
  )
}

async function shown(page: Page, src: string): Promise<number> {
  return page.evaluate(
    (src) => (window as unknown as { site: { shown(s: string): Promise<number> } }).site.shown(src),
    src,
  )
}

/** A 40×30 PNG sent through uploadService(), and displayed from where it was stored. */
async function imageShown(page: Page): Promise<Result> {
  const image = await upload(page, 'image', png(40, 30), 'photo.png', 'image/png')
  assert.equal(image.state, 'SUCCESS', image.message)
  assert.equal(await shown(page, image.url as string), 40, 'the stored image is displayed')
  return image
}

/** `clip` sent through uploadService() as a video, and served back whole by the site. */
async function videoWhole(
  page: Page,
  url: string,
  clip: Buffer,
  extra: Record<string, unknown>,
): Promise<Result> {
  const movie = await upload(page, 'video', clip, 'clip.mp4', 'video/mp4', extra)
  assert.equal(movie.state, 'SUCCESS', movie.message)
  const stored = await fetch(`${url}${movie.url}`)
  assert.ok(Buffer.from(await stored.arrayBuffer()).equals(clip), 'the video arrived whole')
  return movie
}

const video = (bytes: number) => Buffer.concat([MP4, randomBytes(bytes - MP4.length)])

test('through the documented nginx site in Chromium, uploadService() sends an image and a video with tus, and the article using both is saved to the documents API', async (t) => {
  const srv = await startTestServer(t, behindNginx())
  const url = await site(t, srv)
  if (!url) return
  const opened = await editorPage(t, url)
  if (!opened) return
  const { page, sent } = opened

  const image = await imageShown(page)
  const clip = video(3 * MB + 17)
  const movie = await videoWhole(page, url, clip, { tusChunkSize: MB })

  const writes = sent.filter((r) => !/^(GET|HEAD|OPTIONS) /.test(r))
  assert.deepEqual(
    writes.map((r) => r.replace(/^(\w+ \/tus\/)[^/]+$/, '$1<id>')),
    ['POST /tus', 'PATCH /tus/<id>', 'POST /tus', ...Array(4).fill('PATCH /tus/<id>')],
    'tus, through the page’s own origin, and no multipart POST',
  )

  const article = `<p>Holiday</p><p><img src="${image.url}"></p><video src="${movie.url}" controls></video>`
  const saved = await page.evaluate(
    ([id, html]) =>
      (
        window as unknown as {
          site: { save(i: string, h: string): Promise<{ status: number; body: string }> }
        }
      ).site.save(id, html),
    ['post-1', article] as const,
  )
  assert.equal(saved.status, 200, saved.body)
  assert.deepEqual(JSON.parse(saved.body).files.sort(), [image.url, movie.url].sort())
  const recorded = await fetch(`${url}/documents/post-1`, {
    headers: { Authorization: `Bearer ${TOKEN}` },
  })
  assert.equal(recorded.status, 200)
  assert.deepEqual((await recorded.json()).files.sort(), [image.url, movie.url].sort())
})

test('through the documented nginx site in Chromium, uploadService() sends an image and a video straight to the bucket, signed through the site', async (t) => {
  const s3 = await startS3rver()
  t.after(() => s3.close())
  const bucket = await s3.createBucket()
  const srv = await startTestServer(t, behindNginx({ storage: s3.storageConfig(bucket) }))
  const url = await site(t, srv)
  if (!url) return
  await s3.allowOrigins(bucket, [url])
  const opened = await editorPage(t, url)
  if (!opened) return
  const { page, sent } = opened

  await imageShown(page)
  const clip = video(6 * MB)
  await videoWhole(page, url, clip, {
    directMultipartThreshold: 5 * MB,
    directPartSize: 5 * MB,
  })

  // The config answer and the simple upload's result are read from the editor endpoint as
  // often as the helper needs; every other call, in any order:
  const calls = sent
    .filter((r) => !/ \/(materials|uploads)\/| \/ueditor$|^GET \/$|OPTIONS /.test(r))
    .map((r) =>
      r
        .replace(/\/multipart\/[^/]+/, '/multipart/<id>')
        .replace(/^elsewhere (\w+) .*$/, 'bucket $1'),
    )
  assert.deepEqual(calls.sort(), [
    'GET /s3/s3/multipart/<id>/1',
    'GET /s3/s3/multipart/<id>/2',
    'GET /s3/s3/params',
    'POST /s3/s3/multipart',
    'POST /s3/s3/multipart/<id>/complete',
    'bucket POST',
    'bucket PUT',
    'bucket PUT',
  ])
})
