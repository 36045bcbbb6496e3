import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ListObjectsV2Command } from '@aws-sdk/client-s3'
import type { Frame, Page, Route } from 'playwright-core'
import type { ServerConfigInput } from '../../src/config/schema.js'
import { launchChromium } from '../helpers/chromium.js'
import { MP3, MP4, PDF, png } from '../helpers/fixtures.js'
import { type RunningS3rver, startS3rver } from '../helpers/s3rver.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { tempDir } from '../helpers/temp-dir.js'
import { after, before, describe, type TestContext, test } from '../helpers/test.js'

const USER_TOKEN = 'uploader-token-0123456789abcdef'
const MB5 = 5 * 1024 * 1024

/**
 * A stand-in for UEditor Plus with `uploadServiceEnable: true`: it loads the config answer,
 * then calls `uploadServiceUpload(type, file, callback, { from })` exactly as the editor's
 * simple upload, paste, dialogs and scrawl do, and inserts what their success handlers insert.
 */
const STAND_IN_EDITOR = `<!doctype html><meta charset="utf-8"><title>stand-in editor</title>
<div id="editor"></div>
<script src="/materials/loaders.iife.js"></script>
<script>
window.standIn = {
  async start(serverUrl, token, extra) {
    const answer = await fetch(serverUrl + '?action=config', { headers: { Authorization: 'Bearer ' + token } })
    this.options = await answer.json()
    this.upload = UEditorBackendLoaders.uploadService(Object.assign({ serverUrl, token }, extra))
  },
  bytes(base64) {
    return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))
  },
  /** From now on, files are made by another frame's window, as the editing area's and dialogs' are. */
  async useFrameRealm() {
    const frame = document.createElement('iframe')
    document.body.appendChild(frame)
    this.realm = frame.contentWindow
  },
  /** The editor's file argument for each way in. */
  fileFor(from, base64, name, type, lastModified) {
    const realm = this.realm || window
    const native = new realm.File([this.bytes(base64)], name, { type, lastModified })
    if (from === 'scrawl') return new realm.Blob([this.bytes(base64)], { type: 'image/png' })
    if (from === 'upload' || from === 'paste') return native
    // WebUploader's block: the native File two levels down, the bytes also as blob.source.
    return { file: { id: 'WU_FILE_0', name, type, size: native.size, source: { source: native } }, blob: { source: native } }
  },
  insert(html) {
    const holder = document.createElement('div')
    holder.innerHTML = html
    const node = holder.firstElementChild
    document.getElementById('editor').appendChild(node)
    return node
  },
  run(type, from, base64, name, mime, lastModified) {
    const o = this.options
    const record = { progress: [], endings: [], inserted: null, message: null }
    return new Promise((resolve) => {
      const ended = () => setTimeout(() => resolve(record), 300) // room for a wrong second ending
      const show = (tag, src, text) => {
        const node = this.insert(tag === 'img' ? '<img>' : tag === 'video' ? '<video controls></video>' : '<a></a>')
        if (tag === 'a') { node.href = src; node.textContent = text } else node.src = src
        record.inserted = { tag, src: node.getAttribute(tag === 'a' ? 'href' : 'src') }
      }
      const callback = {
        progress: (p) => record.progress.push(p),
        error: (message) => { record.endings.push('error'); record.message = message; ended() },
        success: (res) => {
          record.endings.push('success')
          if (from === 'upload') {
            if (res.state === 'SUCCESS' && res.url) show('img', o.imageUrlPrefix + res.url)
            else record.message = res.state
          } else if (from === 'paste') {
            show('img', o.imageUrlPrefix + res.url)
          } else if (from === 'scrawl') {
            show('img', res.url)
          } else {
            // WebUploader gets { _raw } and reads it like the server's own answer.
            const json = JSON.parse({ _raw: JSON.stringify(res) }._raw)
            if (json.state !== 'SUCCESS') record.message = json.state
            else if (type === 'image') show('img', o.imageUrlPrefix + json.url)
            else if (type === 'video') show('video', o.videoUrlPrefix + json.url)
            else show('a', o.fileUrlPrefix + json.url, json.original)
          }
          ended()
        },
      }
      this.upload(type, this.fileFor(from, base64, name, mime, lastModified), callback, { from })
    })
  },
  /** Whether the inserted image decoded, and its natural width. */
  async shown(src) {
    const img = [...document.querySelectorAll('#editor img')].find((i) => i.getAttribute('src') === src)
    await img.decode()
    return img.naturalWidth
  },
}
</script>`

interface Ran {
  progress: number[]
  endings: string[]
  inserted: { tag: string; src: string } | null
  message: string | null
}

async function standInEditor(
  t: TestContext,
  srv: TestServer,
  extra: Record<string, unknown> = {},
): Promise<Page | null> {
  const browser = await launchChromium(t)
  if (!browser) return null
  const page = await browser.newPage()
  await openStandIn(page, srv, extra)
  return page
}

/** (Re)loads the stand-in editor page: what a reload of the editor's page does. */
async function openStandIn(page: Page, srv: TestServer, extra: Record<string, unknown>) {
  await page.goto(`${srv.url}/healthz`)
  await page.setContent(STAND_IN_EDITOR)
  await page.evaluate(
    ([serverUrl, token, more]) =>
      (window as unknown as StandIn).standIn.start(serverUrl, token, more),
    [`${srv.url}/ueditor`, USER_TOKEN, extra] as const,
  )
}

interface StandIn {
  standIn: {
    start(serverUrl: string, token: string, extra: unknown): Promise<void>
    useFrameRealm(): Promise<void>
    run(...args: unknown[]): Promise<Ran>
    shown(src: string): Promise<number>
  }
}

function run(
  page: Page,
  type: string,
  from: string,
  bytes: Buffer,
  name: string,
  mime: string,
  lastModified = 1_700_000_000_000,
): Promise<Ran> {
  return page.evaluate((args) => (window as unknown as StandIn).standIn.run(...args), [
    type,
    from,
    bytes.toString('base64'),
    name,
    mime,
    lastModified,
  ] as const)
}

/** Progress as the editor saw it: starting at 0, never going back, ending at 1. */
function assertProgress(ran: Ran, o: { between?: boolean } = {}): void {
  assert.equal(ran.progress[0], 0)
  assert.equal(ran.progress.at(-1), 1)
  for (let i = 1; i < ran.progress.length; i++)
    assert.ok((ran.progress[i] as number) >= (ran.progress[i - 1] as number), `${ran.progress}`)
  if (o.between)
    assert.ok(
      ran.progress.some((p) => p > 0 && p < 1),
      `${ran.progress}`,
    )
}

/** The stored bytes behind an inserted URL, read back through the page's origin. */
async function served(srv: TestServer, src: string): Promise<Buffer> {
  const response = await fetch(new URL(src, `${srv.url}/healthz`))
  assert.equal(response.status, 200)
  return Buffer.from(await response.arrayBuffer())
}

const video = (megabytes: number) =>
  Buffer.concat([MP4, randomBytes(megabytes * 1024 * 1024 - MP4.length)])

/**
 * Every way UEditor Plus calls for an image, then a video through the video dialog. With
 * `chunked`, the video goes in several requests, so progress must show values between 0 and 1
 * (a browser reports at least the end of each request body).
 */
async function imageAndVideoThroughEveryEntry(
  srv: TestServer,
  page: Page,
  o: { chunked: boolean; videoMegabytes?: number },
): Promise<void> {
  const image = png(40, 30)
  for (const [type, from, name] of [
    ['image', 'upload', 'photo.png'],
    ['image', 'paste', 'image.png'],
    ['image', 'image', 'dialog photo.png'],
    ['image', 'scrawl', ''],
  ] as const) {
    const ran = await run(page, type, from, image, name, 'image/png')
    assert.deepEqual(ran.endings, ['success'], `${from}: ${ran.message}`)
    assert.equal(ran.inserted?.tag, 'img')
    assertProgress(ran)
    const width = await page.evaluate(
      (src) => (window as unknown as StandIn).standIn.shown(src),
      ran.inserted?.src as string,
    )
    assert.equal(width, 40, `${from}: the inserted image is displayed`)
  }
  const clip = video(o.videoMegabytes ?? 3)
  const ran = await run(page, 'video', 'video', clip, 'clip.mp4', 'video/mp4')
  assert.deepEqual(ran.endings, ['success'], `video: ${ran.message}`)
  assert.equal(ran.inserted?.tag, 'video')
  assertProgress(ran, { between: o.chunked })
  assert.ok((await served(srv, ran.inserted?.src as string)).equals(clip))
}

// Tests run from packages/server/dist/tests/browser; the docs live at the repository root.
const repoPath = (path: string) => fileURLToPath(new URL(`../../../../../${path}`, import.meta.url))

/** The page snippet of docs/uploads.md, verbatim. */
async function docsSnippet(): Promise<string> {
  const doc = await readFile(repoPath('docs/uploads.md'), 'utf8')
  const section = doc.slice(doc.indexOf('## UEditor Plus page snippet'))
  const block = /```html\n([\s\S]*?)```/.exec(section)?.[1]
  assert.ok(block?.includes('uploadService('), 'docs/uploads.md has the page snippet')
  return block as string
}

/**
 * Stand-ins for the built editor's two scripts, with what the dialogs rely on: `UE.getEditor`
 * keeps the page's options, loads the config answer over them (same origin: XHR with
 * `serverHeaders`), registers the instance in `UE.instants`, hands the dialogs
 * `getOpt('uploadService').upload`, which calls the page's `uploadServiceUpload`, and opens a
 * dialog as UEditor Plus does: its own page from `dialogs/<name>/<name>.html` in an iframe.
 */
const EDITOR_CONFIG_JS = `window.UEDITOR_CONFIG = { UEDITOR_HOME_URL: '/ueditor-plus/', serverHeaders: {} }\n`
const EDITOR_ALL_JS = `window.UE = {
  instants: {},
  getEditor: function (id, options) {
    var opts = Object.assign({}, window.UEDITOR_CONFIG, options)
    var editor = {
      uid: Object.keys(UE.instants).length,
      options: opts,
      getOpt: function (key) { return opts[key] },
    }
    opts.uploadService = {
      upload: function (type, file, callback, option) {
        opts.uploadServiceUpload(type, file, callback, option)
      },
    }
    UE.instants['ueditorInstant' + editor.uid] = editor
    editor.configLoaded = fetch(opts.serverUrl + '?action=config&&noCache=' + Date.now(), {
      headers: opts.serverHeaders,
    })
      .then(function (res) { return res.json() })
      .then(function (config) { Object.assign(opts, config) })
    editor.openDialog = function (name) {
      var frame = document.createElement('iframe')
      frame.name = name
      frame.src = opts.UEDITOR_HOME_URL + 'dialogs/' + name + '/' + name + '.html'
      document.body.appendChild(frame)
      return new Promise(function (resolve) { frame.onload = resolve })
    }
    window.standInEditor = editor
    return editor
  },
}
`

/**
 * A dialog page (image, video, audio, attachment), run in its iframe like UEditor Plus's: the
 * editor comes from the parent page (as the dialogs' internal.js takes it), the file from the
 * dialog's own file input, so it is a File of the iframe's realm. WebUploader wraps it in its
 * block, and with `uploadServiceEnable` its `customUpload` passes the block on with
 * `{ from: <dialog> }`; a success is read back through `{ _raw }` like the server's own answer,
 * an error shows "上传失败，请重试".
 */
const DIALOG_HTML = `<!doctype html><meta charset="utf-8"><title>dialog</title>
<input type="file" id="picker"><ul id="queue"></ul>
<script>
var editor = parent.UE.instants['ueditorInstant0']
var type = location.pathname.split('/').slice(-2)[0]
var prefixKey = { image: 'imageUrlPrefix', video: 'videoUrlPrefix', audio: 'audioUrlPrefix', attachment: 'fileUrlPrefix' }[type]
window.uploads = []
document.getElementById('picker').onchange = function () {
  var native = this.files[0]
  var block = {
    file: { id: 'WU_FILE_' + uploads.length, name: native.name, type: native.type, size: native.size,
      source: { ruid: 'rt_rt_0', source: native } },
    blob: { source: native },
  }
  var record = { sameRealmAsPage: native instanceof parent.Blob, progress: [], ending: null, shown: null, url: null }
  uploads.push(record)
  editor.getOpt('uploadService').upload(type, block, {
    success: function (res) {
      record.ending = 'success'
      var json = JSON.parse({ _raw: JSON.stringify(res) }._raw)
      if (json.state === 'SUCCESS') record.url = editor.getOpt(prefixKey) + json.url
      else record.shown = json.state
    },
    error: function (message) {
      record.ending = 'error'
      record.shown = '上传失败，请重试'
      record.message = String(message)
    },
    progress: function (p) { record.progress.push(p) },
  }, { from: type })
}
</script>`

interface DialogUpload {
  sameRealmAsPage: boolean
  progress: number[]
  ending: string | null
  shown: string | null
  url: string | null
  message?: string
}

/**
 * A site folder for `site.dir`: the page of docs/uploads.md as `index.html`, and the stand-in
 * editor in `ueditor-plus/` with its four upload dialogs.
 */
async function editorSite(t: TestContext): Promise<string> {
  const dir = await tempDir(t, 'ueditor-dialogs-')
  const snippet = await docsSnippet()
  const page = `<!doctype html><meta charset="utf-8"><title>editor</title>\n<div id="editor"></div>\n${snippet}`
  await writeFile(join(dir, 'index.html'), page)
  await mkdir(join(dir, 'ueditor-plus'))
  await writeFile(join(dir, 'ueditor-plus', 'ueditor.config.js'), EDITOR_CONFIG_JS)
  await writeFile(join(dir, 'ueditor-plus', 'ueditor.all.js'), EDITOR_ALL_JS)
  for (const name of ['image', 'video', 'audio', 'attachment']) {
    await mkdir(join(dir, 'ueditor-plus', 'dialogs', name), { recursive: true })
    await writeFile(join(dir, 'ueditor-plus', 'dialogs', name, `${name}.html`), DIALOG_HTML)
  }
  return dir
}

/** The docs' page, opened with the user's token in sessionStorage, once the config is in. */
async function docsSnippetPage(t: TestContext, srv: TestServer): Promise<Page | null> {
  const browser = await launchChromium(t)
  if (!browser) return null
  const page = await browser.newPage()
  await page.addInitScript((token) => sessionStorage.setItem('editor-token', token), USER_TOKEN)
  await page.goto(`${srv.url}/`)
  await page.evaluate(() => (window as unknown as EditorPage).standInEditor.configLoaded)
  return page
}

interface EditorPage {
  standInEditor: { configLoaded: Promise<void>; openDialog(name: string): Promise<void> }
}

/** Opens the dialog, picks the file in its file input, and waits for the editor's ending. */
async function uploadThroughDialog(
  page: Page,
  dialog: 'image' | 'video' | 'audio' | 'attachment',
  file: { name: string; mimeType: string; buffer: Buffer },
): Promise<DialogUpload> {
  let frame: Frame | null = page.frame({ name: dialog })
  if (!frame) {
    await page.evaluate(
      (name) => (window as unknown as EditorPage).standInEditor.openDialog(name),
      dialog,
    )
    frame = page.frame({ name: dialog })
  }
  assert.ok(frame, `the ${dialog} dialog is open`)
  const index = await frame.evaluate(
    () => (window as unknown as { uploads: unknown[] }).uploads.length,
  )
  await frame.setInputFiles('#picker', file)
  await frame.waitForFunction(
    (i) => (window as unknown as { uploads: DialogUpload[] }).uploads[i]?.ending != null,
    index,
    { timeout: 30_000 },
  )
  return frame.evaluate(
    (i) => (window as unknown as { uploads: DialogUpload[] }).uploads[i],
    index,
  ) as Promise<DialogUpload>
}

/**
 * A file through each of the four dialogs: each is a File of the dialog's realm, each ends in
 * one success, and the URL the dialog would insert serves the file (the image re-encoded).
 */
async function everyDialog(srv: TestServer, page: Page): Promise<void> {
  const clip = Buffer.concat([MP4, randomBytes(64 * 1024)])
  const files = [
    ['image', { name: 'dialog photo.png', mimeType: 'image/png', buffer: png(40, 30) }],
    ['video', { name: 'clip.mp4', mimeType: 'video/mp4', buffer: clip }],
    ['audio', { name: 'song.mp3', mimeType: 'audio/mpeg', buffer: MP3 }],
    ['attachment', { name: 'report.pdf', mimeType: 'application/pdf', buffer: PDF }],
  ] as const
  for (const [dialog, file] of files) {
    const done = await uploadThroughDialog(page, dialog, file)
    assert.equal(done.sameRealmAsPage, false, `${dialog}: the File comes from the dialog's realm`)
    assert.equal(done.ending, 'success', `${dialog}: ${done.message ?? done.shown}`)
    assert.equal(done.shown, null)
    assert.equal(done.progress[0], 0)
    assert.equal(done.progress.at(-1), 1)
    const bytes = await served(srv, done.url as string)
    if (dialog === 'image') assert.ok(bytes.subarray(1, 4).equals(Buffer.from('PNG')), 'a PNG')
    else assert.ok(bytes.equals(file.buffer), `${dialog}: the stored bytes are the file's`)
  }
}

describe('uploadService() in Chromium, called the way UEditor Plus calls uploadServiceUpload', () => {
  test('without tus or direct, every entry falls back to the multipart POST and the image is displayed', async (t) => {
    const srv = await startTestServer(t, {
      auth: { tokens: [`alice:${USER_TOKEN}`] },
      tus: { enabled: false },
    })
    const page = await standInEditor(t, srv)
    if (!page) return
    const sent: string[] = []
    page.on('request', (r) => {
      if (r.method() === 'POST') sent.push(new URL(r.url()).search)
    })
    await imageAndVideoThroughEveryEntry(srv, page, { chunked: false })
    assert.deepEqual(sent, [
      '?action=image',
      '?action=image',
      '?action=image',
      '?action=image',
      '?action=video',
    ])
  })

  test('every entry takes a File or Blob made by another frame, as the editing area and the dialogs make them', async (t) => {
    const srv = await startTestServer(t, {
      auth: { tokens: [`alice:${USER_TOKEN}`] },
      tus: { enabled: false },
    })
    const page = await standInEditor(t, srv)
    if (!page) return
    await page.evaluate(() => (window as unknown as StandIn).standIn.useFrameRealm())
    await imageAndVideoThroughEveryEntry(srv, page, { chunked: false })
  })

  test('a pasted PDF goes to the file action, and a refusal reaches the editor as one error', async (t) => {
    const srv = await startTestServer(t, {
      auth: { tokens: [`alice:${USER_TOKEN}`] },
      tus: { enabled: false },
    })
    const page = await standInEditor(t, srv)
    if (!page) return
    const pdf = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n', 'latin1')
    const pasted = await run(page, 'image', 'paste', pdf, 'report.pdf', 'application/pdf')
    assert.deepEqual(pasted.endings, ['success'], `${pasted.message}`)
    assert.match(pasted.inserted?.src ?? '', /^\/uploads\/file\/.*\.pdf$/)
    const disguised = await run(
      page,
      'image',
      'upload',
      Buffer.from('<?php echo 1;'),
      'x.png',
      'image/png',
    )
    assert.deepEqual(disguised.endings, ['error'])
    assert.ok(disguised.message && disguised.message.length > 0)
    assert.equal(disguised.inserted, null)
  })
})

describe("uploadService() in Chromium, from the dialogs in their own iframes (the docs' page snippet)", () => {
  test("without tus or direct, a File from each dialog's iframe goes in one multipart POST to its action", async (t) => {
    const srv = await startTestServer(t, {
      auth: { tokens: [`alice:${USER_TOKEN}`] },
      tus: { enabled: false },
      site: { dir: await editorSite(t) },
    })
    const page = await docsSnippetPage(t, srv)
    if (!page) return
    const sent: string[] = []
    page.on('request', (r) => {
      if (r.method() === 'POST') sent.push(new URL(r.url()).search)
    })
    await everyDialog(srv, page)
    assert.deepEqual(sent, ['?action=image', '?action=video', '?action=audio', '?action=file'])
  })

  test("with tus, a File from each dialog's iframe is sent with tus", async (t) => {
    const srv = await startTestServer(t, {
      auth: { tokens: [`alice:${USER_TOKEN}`] },
      site: { dir: await editorSite(t) },
    })
    const page = await docsSnippetPage(t, srv)
    if (!page) return
    const sent: string[] = []
    page.on('request', (r) => {
      const url = new URL(r.url())
      if (r.method() === 'POST' || r.method() === 'PATCH')
        sent.push(`${r.method()} ${url.pathname.replace(/\/tus\/.+$/, '/tus/<id>')}`)
    })
    await everyDialog(srv, page)
    assert.deepEqual(
      sent.filter((r) => r.startsWith('POST')),
      Array(4).fill('POST /tus'),
    )
  })
})

describe('uploadService() in Chromium, through tus on local disk', () => {
  test('every entry sends its file with tus, the image is displayed and the video arrives whole with progress', async (t) => {
    const srv = await startTestServer(t, { auth: { tokens: [`alice:${USER_TOKEN}`] } })
    const page = await standInEditor(t, srv, { tusChunkSize: 1024 * 1024 })
    if (!page) return
    const sent: string[] = []
    page.on('request', (r) => {
      const url = new URL(r.url())
      if (r.method() === 'POST' || r.method() === 'PATCH')
        sent.push(`${r.method()} ${url.pathname.replace(/\/tus\/.+$/, '/tus/<id>')}${url.search}`)
    })
    await imageAndVideoThroughEveryEntry(srv, page, { chunked: true })
    const posts = sent.filter((r) => r.startsWith('POST'))
    assert.deepEqual(posts, Array(5).fill('POST /tus'), 'no multipart POST to the editor endpoint')
    assert.equal(sent.filter((r) => r === 'PATCH /tus/<id>').length, 4 + 3)
  })

  test('a tus upload cut off midway continues after a reload from the offset the server holds', async (t) => {
    const srv = await startTestServer(t, { auth: { tokens: [`alice:${USER_TOKEN}`] } })
    const options = { tusChunkSize: 1024 * 1024, retryDelays: [0] }
    const page = await standInEditor(t, srv, options)
    if (!page) return
    const clip = video(4)
    // Every PATCH after the first megabyte loses its connection: the call ends in one error.
    const cutOff = async (route: Route) => {
      const request = route.request()
      if (request.method() === 'PATCH' && request.headers()['upload-offset'] !== '0')
        return route.abort('connectionreset')
      return route.continue()
    }
    await page.route('**/tus/**', cutOff)
    const cut = await run(page, 'video', 'video', clip, 'clip.mp4', 'video/mp4')
    assert.deepEqual(cut.endings, ['error'])
    await page.unroute('**/tus/**', cutOff)

    await openStandIn(page, srv, options)
    const resumedAt: number[] = []
    const created: string[] = []
    page.on('response', (r) => {
      if (r.request().method() === 'HEAD') resumedAt.push(Number(r.headers()['upload-offset']))
      if (r.request().method() === 'POST') created.push(r.url())
    })
    const resumed = await run(page, 'video', 'video', clip, 'clip.mp4', 'video/mp4')
    assert.deepEqual(resumed.endings, ['success'], `${resumed.message}`)
    assert.deepEqual(created, [], 'no new upload was created')
    assert.equal(resumedAt.length, 1)
    assert.ok((resumedAt[0] as number) >= 1024 * 1024, `resumed at ${resumedAt[0]}`)
    assert.ok((await served(srv, resumed.inserted?.src as string)).equals(clip))
  })

  test('a disguised PHP sent with tus ends in one error with the readable refusal and leaves nothing stored', async (t) => {
    const srv = await startTestServer(t, { auth: { tokens: [`alice:${USER_TOKEN}`] } })
    const page = await standInEditor(t, srv)
    if (!page) return
    const php = Buffer.from('<?php system($_GET["c"]); ?>')
    for (const from of ['upload', 'image'] as const) {
      const ran = await run(page, 'image', from, php, 'avatar.png', 'image/png')
      assert.deepEqual(ran.endings, ['error'], from)
      assert.ok(ran.message && !/HTTP|connection/.test(ran.message), `${from}: ${ran.message}`)
      assert.equal(ran.inserted, null)
    }
    assert.deepEqual(await srv.storedFiles(), [])
  })

  test('the ES module bundle loads the tus client from its chunk on the first tus upload', async (t) => {
    const srv = await startTestServer(t, { auth: { tokens: [`alice:${USER_TOKEN}`] } })
    const browser = await launchChromium(t)
    if (!browser) return
    const page = await browser.newPage()
    const scripts: string[] = []
    page.on('request', (r) => {
      if (r.url().endsWith('.js')) scripts.push(new URL(r.url()).pathname)
    })
    await page.goto(`${srv.url}/healthz`)
    await page.evaluate(async () => {
      const w = window as unknown as { loaders: unknown }
      w.loaders = await import(`${location.origin}/materials/loaders.js`)
    })
    const chunks = () => scripts.filter((p) => /^\/materials\/loaders-.+\.min\.js$/.test(p))
    const beforeUpload = chunks()
    const state = await page.evaluate(
      async ([token, base64]) => {
        // Typed by hand: the server's tests compile before the loaders package (a fresh
        // clone has no loaders types yet), and this page uses the bundle, not the types.
        type Upload = (
          type: string,
          file: File,
          callback: { success(res: { state: string }): void; error(message: string): void },
          option: { from: string },
        ) => void
        const { uploadService } = (
          window as unknown as {
            loaders: { uploadService(o: { serverUrl: string; token: string }): Upload }
          }
        ).loaders
        const upload = uploadService({ serverUrl: '/ueditor', token })
        const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))
        return new Promise<string>((resolve) =>
          upload(
            'image',
            new File([bytes], 'a.png', { type: 'image/png' }),
            { success: (r) => resolve(r.state), error: (m) => resolve(m) },
            { from: 'upload' },
          ),
        )
      },
      [USER_TOKEN, png(8, 8).toString('base64')] as const,
    )
    assert.equal(state, 'SUCCESS')
    assert.equal(chunks().length, beforeUpload.length + 1, `scripts: ${scripts.join(', ')}`)
  })
})

describe('uploadService() in Chromium, straight to the bucket (moto)', () => {
  let s3: RunningS3rver
  before(async () => {
    s3 = await startS3rver()
  })
  after(async () => {
    await s3.close()
  })

  async function startOnS3(
    t: TestContext,
    extra: ServerConfigInput = {},
  ): Promise<{ srv: TestServer; bucket: string }> {
    const bucket = await s3.createBucket()
    const srv = await startTestServer(t, {
      auth: { tokens: [`alice:${USER_TOKEN}`] },
      storage: s3.storageConfig(bucket),
      ...extra,
    })
    await s3.allowOrigins(bucket, [srv.url])
    return { srv, bucket }
  }

  test('images go in one signed POST each, the video in signed parts, the bytes never through the server', async (t) => {
    const { srv, bucket } = await startOnS3(t)
    const page = await standInEditor(t, srv, {
      directMultipartThreshold: 5 * 1024 * 1024,
      directPartSize: 5 * 1024 * 1024,
    })
    if (!page) return
    const toBucket: string[] = []
    const toServer: string[] = []
    page.on('request', (r) => {
      const url = new URL(r.url())
      if (r.method() === 'GET' || r.method() === 'OPTIONS') return
      if (url.origin === s3.endpoint)
        toBucket.push(`${r.method()} ${url.search ? 'part' : 'object'}`)
      else toServer.push(`${r.method()} ${url.pathname}`)
    })
    await imageAndVideoThroughEveryEntry(srv, page, { chunked: true, videoMegabytes: 12 })
    assert.deepEqual(toBucket, [
      'POST object',
      'POST object',
      'POST object',
      'POST object',
      'PUT part',
      'PUT part',
      'PUT part',
    ])
    // Only the multipart create and complete calls post to the server, with no file in them.
    assert.deepEqual(toServer, ['POST /s3/s3/multipart', `POST ${toServer[1]?.slice(5)}`])
    assert.match(toServer[1] ?? '', /^POST \/s3\/s3\/multipart\/[^/]+\/complete$/)
    const listed = await s3.client.send(new ListObjectsV2Command({ Bucket: bucket }))
    const keys = (listed.Contents ?? []).map((o) => o.Key as string)
    assert.equal(
      keys.filter((k) => k.startsWith('pending/')).length,
      0,
      'no pending object is left',
    )
    assert.equal(keys.filter((k) => k.startsWith('image/')).length, 4)
    assert.equal(keys.filter((k) => k.startsWith('video/')).length, 1)

    // A PHP script named .png reaches the bucket, is refused by the ending and removed.
    const php = Buffer.from('<?php system($_GET["c"]); ?>')
    const refused = await run(page, 'image', 'upload', php, 'shell.png', 'image/png')
    assert.deepEqual(refused.endings, ['error'])
    assert.ok(refused.message && refused.message.length > 0)
    assert.equal(refused.inserted, null)
    const after = await s3.client.send(new ListObjectsV2Command({ Bucket: bucket }))
    assert.deepEqual(
      (after.Contents ?? []).map((o) => o.Key as string).sort(),
      [...keys].sort(),
      'the refused file left nothing in the bucket',
    )
  })

  test("from the docs' page snippet, a File from each dialog's iframe goes to the bucket in one signed POST", async (t) => {
    const { srv } = await startOnS3(t, { site: { dir: await editorSite(t) } })
    const page = await docsSnippetPage(t, srv)
    if (!page) return
    const toBucket: string[] = []
    page.on('request', (r) => {
      if (new URL(r.url()).origin === s3.endpoint && r.method() === 'POST') toBucket.push(r.url())
    })
    await everyDialog(srv, page)
    assert.equal(toBucket.length, 4)
  })

  test('a multipart upload cut off midway continues after a reload from the parts the bucket holds', async (t) => {
    const { srv } = await startOnS3(t)
    const options = { directMultipartThreshold: MB5, directPartSize: MB5, retryDelays: [0] }
    const page = await standInEditor(t, srv, options)
    if (!page) return
    const clip = video(12)
    // The connection drops whenever part 2 is sent: the call ends in one error.
    const dropPartTwo = '**/*partNumber=2*'
    await page.route(dropPartTwo, (route) => route.abort('connectionreset'))
    const cut = await run(page, 'video', 'video', clip, 'clip.mp4', 'video/mp4')
    assert.deepEqual(cut.endings, ['error'])
    await page.unroute(dropPartTwo)

    await openStandIn(page, srv, options)
    const calls: string[] = []
    page.on('request', (r) => {
      const url = new URL(r.url())
      if (r.method() === 'OPTIONS') return
      if (url.origin === s3.endpoint)
        calls.push(`${r.method()} part ${url.searchParams.get('partNumber')}`)
      else if (url.pathname.startsWith('/s3/'))
        calls.push(`${r.method()} ${url.pathname.replace(/\/multipart\/[^/]+/, '/multipart/<id>')}`)
    })
    const resumed = await run(page, 'video', 'video', clip, 'clip.mp4', 'video/mp4')
    assert.deepEqual(resumed.endings, ['success'], `${resumed.message}`)
    assert.deepEqual(calls, [
      'GET /s3/s3/multipart/<id>',
      'GET /s3/s3/multipart/<id>/2',
      'PUT part 2',
      'GET /s3/s3/multipart/<id>/3',
      'PUT part 3',
      'POST /s3/s3/multipart/<id>/complete',
    ])
    assert.ok((await served(srv, resumed.inserted?.src as string)).equals(clip))
  })
})
