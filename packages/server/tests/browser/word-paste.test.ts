import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import sharp from 'sharp'
import { AUDIENCE, hsToken, ISSUER, SECRET } from '../helpers/auth.js'
import { launchChromium } from '../helpers/chromium.js'
import { png } from '../helpers/fixtures.js'
import { solid } from '../helpers/images.js'
import { redEmf, redWmf, SOFFICE } from '../helpers/libreoffice.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, type TestContext, test } from '../helpers/test.js'

const TOKEN = 'word-paste-token-0123456789abcdef'

/**
 * A stand-in for UEditor Plus, written from its source where a paste from Word is concerned.
 * `UE.getEditor` keeps the page's options, builds the editing area as an iframe (another realm:
 * its body, its events, its DataTransfer), loads the config answer over them (same origin: with
 * `serverHeaders`), and keeps `serverparam` values. The paste plugin listens to `paste` on the
 * editing body; a moment later it runs the pasted HTML through the `wordimage` input rule (each
 * `<img src="file:…">` becomes a spacer with the address in `data-word-image` and a placeholder
 * background), inserts it and fires `afterpaste`. A synthetic paste event pastes nothing by
 * itself, so the stand-in takes the HTML the browser would have put in its pastebin from the
 * event's clipboard data. `wordImageDialog` sends a file the way the Word-image dialog's
 * WebUploader does: without `serverHeaders`.
 */
const EDITOR_JS = `
window.UEDITOR_CONFIG = { UEDITOR_HOME_URL: '/ueditor-plus/', serverHeaders: {} }
window.UE = {
  getEditor: function (id, options) {
    var listeners = {}
    var serverParam = {}
    var opts = Object.assign({}, window.UEDITOR_CONFIG, options)
    opts.themePath = opts.UEDITOR_HOME_URL + 'themes/'
    opts.langPath = opts.UEDITOR_HOME_URL + 'lang/'
    opts.theme = 'default'
    opts.lang = 'zh-cn'
    var me = {
      isReady: 0,
      getOpt: function (key) { return opts[key] },
      getActionUrl: function (action) {
        var server = opts.serverUrl
        return server + (server.indexOf('?') === -1 ? '?' : '&') + 'action=' + (opts[action] || action)
      },
      addListener: function (type, fn) { (listeners[type] = listeners[type] || []).push(fn) },
      removeListener: function (type, fn) {
        listeners[type] = (listeners[type] || []).filter(function (f) { return f !== fn })
      },
      fireEvent: function (type) {
        var args = [].slice.call(arguments)
        ;(listeners[type] || []).slice().forEach(function (fn) { fn.apply(me, args) })
      },
      ready: function (fn) { me.isReady ? fn.call(me) : me.addListener('ready', fn) },
      execCommand: function (cmd, value) { if (cmd === 'serverparam') Object.assign(serverParam, value) },
      queryCommandValue: function (cmd) { return cmd === 'serverparam' ? serverParam : undefined },
    }
    me.configLoaded = fetch(me.getActionUrl('config') + '&&noCache=' + Date.now(), { headers: opts.serverHeaders })
      .then(function (res) { return res.json() })
      .then(function (config) { Object.assign(opts, config) })
    var frame = document.createElement('iframe')
    document.getElementById(id).appendChild(frame)
    setTimeout(function () {
      me.window = frame.contentWindow
      me.document = frame.contentDocument
      me.body = me.document.body
      me.body.contentEditable = 'true'
      pastePlugin(me)
      me.isReady = 1
      me.fireEvent('ready')
    })
    function pastePlugin(me) {
      me.body.addEventListener('paste', function (e) {
        var html = e.clipboardData ? e.clipboardData.getData('text/html') : ''
        setTimeout(function () { filter(html) })
      })
      function filter(html) {
        var bin = me.document.createElement('template')
        bin.innerHTML = html
        bin.content.querySelectorAll('img').forEach(function (img) {
          var src = img.getAttribute('src')
          if (src && /^(?:(file:\\/+))/.test(src)) {
            var small = parseInt(img.getAttribute('width')) < 128 || parseInt(img.getAttribute('height')) < 43
            img.setAttribute('data-word-image', src)
            img.setAttribute('src', opts.UEDITOR_HOME_URL + 'themes/default/images/spacer.gif')
            img.setAttribute('style', 'background:url(' + (small ? opts.themePath + opts.theme + '/images/word.gif'
              : opts.langPath + opts.lang + '/images/localimage.png') + ') no-repeat center center;border:1px solid #ddd')
          }
        })
        var pasted = { html: bin.innerHTML }
        me.fireEvent('beforepaste', pasted, bin.content)
        // A listener that takes the paste over (a table paste does) empties it: nothing more happens.
        if (!pasted.html) return
        bin.innerHTML = pasted.html
        me.body.appendChild(me.document.importNode(bin.content, true))
        me.fireEvent('afterpaste')
      }
    }
    return me
  },
}
window.wordImageDialog = function (me, bytes, name) {
  var file = new File([bytes], name)
  var form = new FormData()
  form.append('id', 'WU_FILE_0')
  form.append('name', name)
  form.append('type', file.type)
  form.append('lastModifiedDate', new Date().toString())
  form.append('size', String(file.size))
  form.append(me.getOpt('imageFieldName'), file, name)
  return fetch(me.getActionUrl(me.getOpt('imageActionName')), { method: 'POST', body: form })
    .then(function (res) { return res.json().then(function (body) { return { status: res.status, body: body } }) })
}
`

const PAGE = `<!doctype html><meta charset="utf-8"><title>editor</title>
<div id="editor"></div>
<script src="/materials/loaders.iife.js"></script>
<script>${EDITOR_JS}</script>
<script>
window.harness = {
  reports: [],
  async start(serverUrl, serverHeaders, withAddOn, serviceToken) {
    const options = { serverUrl: serverUrl, serverHeaders: serverHeaders }
    if (serviceToken) {
      options.uploadServiceEnable = true
      options.uploadServiceUpload = UEditorBackendLoaders.uploadService({ serverUrl: serverUrl, token: serviceToken })
    }
    this.editor = UE.getEditor('editor', options)
    await new Promise((resolve) => this.editor.ready(resolve))
    await this.editor.configLoaded
    if (withAddOn)
      UEditorBackendLoaders.wordPaste(this.editor, { onPasted: (report) => this.reports.push(report) })
  },
  /** A paste as the browser dispatches it, with the editing area's own DataTransfer. */
  paste(html, rtf, takenOver) {
    const w = this.editor.window
    const data = new w.DataTransfer()
    data.setData('text/html', html)
    if (rtf !== null) data.setData('text/rtf', rtf)
    const event = takenOver ? 'beforepaste' : 'afterpaste'
    const inserted = new Promise((resolve) => {
      const done = (type, pasted) => {
        this.editor.removeListener(event, done)
        if (takenOver) pasted.html = ''
        resolve()
      }
      this.editor.addListener(event, done)
    })
    this.editor.body.dispatchEvent(new w.ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }))
    return inserted
  },
  /** Drops the n-th picture of the next paste before it is inserted, as a filter rule may. */
  dropFromNextPaste(n) {
    const drop = (type, pasted) => {
      this.editor.removeListener('beforepaste', drop)
      const t = this.editor.document.createElement('template')
      t.innerHTML = pasted.html
      t.content.querySelectorAll('img')[n].remove()
      pasted.html = t.innerHTML
    }
    this.editor.addListener('beforepaste', drop)
  },
  images() {
    return [...this.editor.body.querySelectorAll('img')].map((img) => ({
      src: img.getAttribute('src'),
      _src: img.getAttribute('_src'),
      word: img.getAttribute('data-word-image'),
      width: img.getAttribute('width'),
      height: img.getAttribute('height'),
      style: img.getAttribute('style'),
    }))
  },
  dialog(base64, name) {
    return wordImageDialog(this.editor, Uint8Array.from(atob(base64), (c) => c.charCodeAt(0)), name)
  },
}
</script>`

interface Shown {
  src: string
  _src: string | null
  word: string | null
  width: string | null
  height: string | null
  style: string | null
}

interface Report {
  pictures: number
  sources: number
  placeholders: number
  replaced: number
  left: { src: string; reason: string }[]
}

interface Harness {
  harness: {
    reports: Report[]
    start(
      serverUrl: string,
      headers: Record<string, string>,
      withAddOn: boolean,
      serviceToken?: string,
    ): Promise<void>
    paste(html: string, rtf: string | null, takenOver?: boolean): Promise<void>
    images(): Shown[]
    dropFromNextPaste(n: number): void
    dialog(
      base64: string,
      name: string,
    ): Promise<{ status: number; body: { state: string; code?: string } }>
  }
}

async function editorPage(
  t: TestContext,
  srv: TestServer,
  headers: Record<string, string>,
  o: { addOn?: boolean; serverUrl?: string; serviceToken?: string } = {},
): Promise<Page | null> {
  const browser = await launchChromium(t)
  if (!browser) return null
  const page = await browser.newPage()
  await page.goto(`${srv.url}/healthz`)
  await page.setContent(PAGE)
  await page.evaluate(
    ([serverUrl, h, addOn, service]) =>
      (window as unknown as Harness).harness.start(serverUrl, h, addOn, service),
    [o.serverUrl ?? `${srv.url}/ueditor`, headers, o.addOn ?? true, o.serviceToken ?? ''] as const,
  )
  return page
}

/** A paste; `takenOver`: one a `beforepaste` listener takes over, so the editor inserts nothing. */
const paste = (page: Page, html: string, rtf: string | null, takenOver = false) =>
  page.evaluate(([h, r, o]) => (window as unknown as Harness).harness.paste(h, r, o), [
    html,
    rtf,
    takenOver,
  ] as const)

const images = (page: Page) => page.evaluate(() => (window as unknown as Harness).harness.images())

/** The add-on's report of the `n`th paste, once its uploads have ended. */
async function report(page: Page, n = 1): Promise<Report> {
  await page.waitForFunction(
    (count) => (window as unknown as Harness).harness.reports.length >= count,
    n,
    { timeout: 90_000 },
  )
  return page.evaluate((i) => (window as unknown as Harness).harness.reports[i] as Report, n - 1)
}

/** Word's temporary file for the `n`th picture of a copy. */
const clip = (n: number, ext = 'png') =>
  `file:///C:/Users/ANNA~1/AppData/Local/Temp/msohtmlclip1/01/clip_image${String(n).padStart(3, '0')}.${ext}`

/** The HTML Word puts on the clipboard: each picture as VML in a comment, then as an `<img>`. */
function wordHtml(pictures: { src: string; width: number; height: number }[]): string {
  const body = pictures
    .map(
      (p, i) =>
        `<p class=MsoNormal>Picture ${i + 1}: <!--[if gte vml 1]><v:shape id="Picture_x0020_${i + 1}" type="#_x0000_t75" ` +
        `style='width:${p.width * 0.75}pt;height:${p.height * 0.75}pt'><v:imagedata src="${p.src.replace('clip_image', 'clip_vml')}" o:title=""/>` +
        `</v:shape><![endif]--><![if !vml]><img width=${p.width} height=${p.height} src="${p.src}" v:shapes="Picture_x0020_${i + 1}"><![endif]><o:p></o:p></p>`,
    )
    .join('\r\n')
  return (
    `<html xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office" ` +
    `xmlns:w="urn:schemas-microsoft-com:office:word" xmlns="http://www.w3.org/TR/REC-html40"><head>` +
    `<meta name=Generator content="Microsoft Word 15"><style><!-- p.MsoNormal {margin:0cm;} --></style></head>` +
    `<body lang=EN-US style='tab-interval:36.0pt'><!--StartFragment-->${body}<!--EndFragment--></body></html>`
  )
}

const hex = (bytes: Buffer) => (bytes.toString('hex').match(/.{1,128}/g) ?? []).join('\r\n')

interface Pict {
  blip: 'pngblip' | 'jpegblip' | 'emfblip' | 'wmetafile8'
  bytes: Buffer
  /** Pixels before scaling and cropping. */
  width: number
  height: number
  extra?: string
  /** Raw bytes after `\bin` instead of hex. */
  bin?: boolean
}

/** Word's RTF for one picture: the picture in `\shppict`, a WMF twin in `\nonshppict`. */
function rtfPicture(p: Pict): string {
  const size =
    `\\picw${Math.round(p.width * 26.46)}\\pich${Math.round(p.height * 26.46)}` +
    `\\picwgoal${p.width * 15}\\pichgoal${p.height * 15}`
  const data = p.bin
    ? `\\bin${p.bytes.length} ${p.bytes.toString('latin1')}`
    : `\r\n${hex(p.bytes)}`
  const twin = redWmf().subarray(22)
  return (
    `{\\*\\shppict{\\pict{\\*\\picprop\\shplid1025{\\sp{\\sn shapeType}{\\sv 75}}{\\sp{\\sn fLayoutInCell}{\\sv 1}}}` +
    `\\picscalex100\\picscaley100\\piccropl0\\piccropr0\\piccropt0\\piccropb0${p.extra ?? ''}${size}\\${p.blip}` +
    `\\bliptag-1{\\*\\blipuid 0123456789abcdef0123456789abcdef}${data}}}` +
    `{\\nonshppict{\\pict\\picscalex100\\picscaley100${size}\\wmetafile8\r\n${hex(twin)}}}`
  )
}

function wordRtf(pictures: Pict[]): string {
  const body = pictures
    .map(
      (p, i) =>
        `\\pard\\plain\\ltrpar\\s0 {\\rtlch\\fcs1 \\af0 \\ltrch Picture ${i + 1}: }{${rtfPicture(p)}}\\par`,
    )
    .join('\r\n')
  return (
    `{\\rtf1\\adeflang1025\\ansi\\ansicpg1252\\uc1\\adeff31507\\deff0{\\fonttbl{\\f0\\fbidi \\froman\\fcharset0\\fprq2 Times New Roman;}}` +
    `{\\colortbl;\\red0\\green0\\blue0;}{\\*\\generator Microsoft Word 16.0;}{\\info{\\title clip}}` +
    `\\paperw11906\\paperh16838 ${body}}`
  )
}

/** The stored bytes behind a URL the editor shows. */
async function stored(srv: TestServer, src: string) {
  const response = await fetch(new URL(src, srv.url))
  assert.equal(response.status, 200, src)
  const bytes = Buffer.from(await response.arrayBuffer())
  const meta = await sharp(bytes).metadata()
  return { type: response.headers.get('content-type'), width: meta.width, height: meta.height }
}

describe('pasting from Word with its pictures (wordPaste), in Chromium against the real server', () => {
  test('PNG, JPEG, EMF and WMF pictures from the RTF replace their placeholders in order, cropped and scaled as Word shows them', async (t) => {
    const srv = await startTestServer(t, { auth: { tokens: [`alice:${TOKEN}`] } })
    const page = await editorPage(t, srv, { Authorization: `Bearer ${TOKEN}` })
    if (!page) return
    const dir = await mkdtemp(join(tmpdir(), 'ueditor-word-paste-'))
    t.after(() => rm(dir, { recursive: true, force: true }))
    const drawing = SOFFICE
      ? await redEmf(dir, SOFFICE)
      : { emf: Buffer.from('01000000', 'hex'), width: 200, height: 100 }
    const jpeg = await solid(40, 30, 'blue').jpeg().toBuffer()
    const pictures: Pict[] = [
      { blip: 'pngblip', bytes: png(40, 30), width: 40, height: 30 },
      { blip: 'jpegblip', bytes: jpeg, width: 40, height: 30, bin: true },
      { blip: 'emfblip', bytes: drawing.emf, width: drawing.width, height: drawing.height },
      { blip: 'wmetafile8', bytes: redWmf().subarray(22), width: 96, height: 48 },
      // Cut a quarter off each side: 20 × 30 shown and stored.
      {
        blip: 'pngblip',
        bytes: png(40, 30),
        width: 40,
        height: 30,
        extra: '\\piccropl150\\piccropr150',
      },
      // Shown at half its size; stored whole.
      {
        blip: 'jpegblip',
        bytes: jpeg,
        width: 40,
        height: 30,
        extra: '\\picscalex50\\picscaley50',
      },
    ]
    const shown = [
      [40, 30],
      [40, 30],
      [drawing.width, drawing.height],
      [96, 48],
      [20, 30],
      [20, 15],
    ]
    const sources = pictures.map((_, i) => ({
      src: clip(i + 1, i === 1 || i === 5 ? 'jpg' : 'png'),
      width: shown[i]?.[0] as number,
      height: shown[i]?.[1] as number,
    }))
    const posts: { url: string; headers: Record<string, string> }[] = []
    page.on('request', (r) => {
      if (r.method() === 'POST') posts.push({ url: r.url(), headers: r.headers() })
    })
    await paste(page, `<p>Before</p>`, null)
    await paste(page, wordHtml(sources), wordRtf(pictures))
    const done = await report(page)

    const metafiles = SOFFICE !== null
    assert.deepEqual(
      { ...done, left: done.left.map((l) => l.src) },
      {
        pictures: 6,
        sources: 6,
        placeholders: 6,
        replaced: metafiles ? 6 : 4,
        left: metafiles ? [] : [sources[2]?.src, sources[3]?.src],
      },
      JSON.stringify(done.left),
    )
    const shownNow = await images(page)
    assert.equal(shownNow.length, 6)
    for (const [i, img] of shownNow.entries()) {
      if (!metafiles && (i === 2 || i === 3)) {
        assert.equal(img.word, sources[i]?.src, 'left as the placeholder for the dialog')
        continue
      }
      assert.equal(img.word, null, `picture ${i + 1} is no placeholder any more`)
      assert.equal(img.style, null)
      assert.match(img.src, /^\/uploads\/image\//)
      assert.equal(img._src, img.src)
      assert.deepEqual([Number(img.width), Number(img.height)], shown[i], `picture ${i + 1}`)
      const file = await stored(srv, img.src)
      const expected: [string, number, number][] = [
        ['image/png', 40, 30],
        ['image/jpeg', 40, 30],
        ['image/png', drawing.width, drawing.height],
        ['image/png', 96, 48],
        ['image/png', 20, 30],
        ['image/jpeg', 40, 30],
      ]
      assert.deepEqual([file.type, file.width, file.height], expected[i], `picture ${i + 1}`)
    }
    // One multipart POST per picture taken, each with the editor's serverHeaders.
    assert.equal(posts.length, metafiles ? 6 : 4)
    for (const post of posts) {
      assert.equal(new URL(post.url).searchParams.get('action'), 'image')
      assert.equal(post.headers.authorization, `Bearer ${TOKEN}`)
      assert.match(post.headers['content-type'] ?? '', /^multipart\/form-data/)
    }
  })

  test('without text/rtf the paste is left to the editor: the placeholders stay and nothing is sent, even right after a paste with RTF the editor never inserted', async (t) => {
    const srv = await startTestServer(t, { auth: { tokens: [`alice:${TOKEN}`] } })
    const page = await editorPage(t, srv, { Authorization: `Bearer ${TOKEN}` })
    if (!page) return
    const posts: string[] = []
    page.on('request', (r) => {
      if (r.method() === 'POST') posts.push(r.url())
    })
    const sources = [1, 2].map((n) => ({ src: clip(n), width: 40, height: 30 }))
    const picture = { blip: 'pngblip', bytes: png(40, 30), width: 40, height: 30 } as const
    // A paste with RTF that another listener takes over, then one without RTF with the same
    // addresses: the second is not matched with the first one's pictures.
    await paste(page, wordHtml(sources), wordRtf([picture, picture]), true)
    assert.deepEqual(await images(page), [])
    await paste(page, wordHtml(sources), null)
    const withAddOn = await images(page)
    assert.deepEqual(
      withAddOn.map((i) => i.word),
      sources.map((s) => s.src),
    )
    assert.ok(withAddOn.every((i) => i.src === '/ueditor-plus/themes/default/images/spacer.gif'))
    // Room for a wrong upload to start and show up.
    await page.waitForTimeout(500)
    assert.deepEqual(posts, [])
    assert.equal(
      await page.evaluate(() => (window as unknown as Harness).harness.reports.length),
      0,
    )
  })

  test('a count mismatch leaves every placeholder; a refused picture leaves its own and the rest are replaced', async (t) => {
    const srv = await startTestServer(t, { auth: { tokens: [`alice:${TOKEN}`] } })
    const page = await editorPage(t, srv, { Authorization: `Bearer ${TOKEN}` })
    if (!page) return
    const posts: string[] = []
    page.on('request', (r) => {
      if (r.method() === 'POST') posts.push(r.url())
    })
    const one = { blip: 'pngblip', bytes: png(40, 30), width: 40, height: 30 } as const
    const three = [1, 2, 3].map((n) => ({ src: clip(n), width: 40, height: 30 }))
    await paste(page, wordHtml(three), wordRtf([one, one]))
    const mismatch = await report(page, 1)
    assert.equal(mismatch.replaced, 0)
    assert.deepEqual(
      mismatch.left.map((l) => l.src),
      three.map((s) => s.src),
    )
    assert.match(mismatch.left[0]?.reason ?? '', /2 pictures.*3/)
    assert.deepEqual(posts, [])

    const next = [4, 5].map((n) => ({ src: clip(n), width: 40, height: 30 }))
    const broken = { ...one, bytes: Buffer.from('<?php system($_GET["c"]); ?>') }
    await paste(page, wordHtml(next), wordRtf([broken, one]))
    const partly = await report(page, 2)
    assert.equal(partly.replaced, 1)
    assert.equal(partly.left.length, 1)
    assert.equal(partly.left[0]?.src, next[0]?.src)
    assert.ok(
      partly.left[0]?.reason && !/HTTP/.test(partly.left[0].reason),
      `the server's readable refusal: ${partly.left[0]?.reason}`,
    )
    const shown = await images(page)
    assert.deepEqual(
      shown.map((i) => i.word),
      [...three.map((s) => s.src), next[0]?.src, null],
    )
    assert.match(shown[4]?.src ?? '', /^\/uploads\/image\/.+\.png$/)
  })

  test('with JWT in serverHeaders the add-on stores the pictures where the Word-image dialog is refused, with the serverparam values', async (t) => {
    const srv = await startTestServer(t, {
      auth: {
        mode: 'jwt',
        jwt: { secret: SECRET, audience: AUDIENCE, issuer: ISSUER },
        header: 'X-Token',
      },
    })
    const jwt = await hsToken()
    const page = await editorPage(t, srv, { 'X-Token': jwt })
    if (!page) return
    await page.evaluate(() =>
      (
        window as unknown as { harness: { editor: { execCommand(c: string, v: unknown): void } } }
      ).harness.editor.execCommand('serverparam', { site: 'blog' }),
    )
    const posts: { url: string; token?: string }[] = []
    page.on('request', (r) => {
      if (r.method() === 'POST') posts.push({ url: r.url(), token: r.headers()['x-token'] })
    })
    const picture = png(40, 30)
    const sources = [{ src: clip(1), width: 40, height: 30 }]
    await paste(
      page,
      wordHtml(sources),
      wordRtf([{ blip: 'pngblip', bytes: picture, width: 40, height: 30 }]),
    )
    const done = await report(page)
    assert.equal(done.replaced, 1, JSON.stringify(done.left))
    const [img] = await images(page)
    assert.equal(img?.word, null)
    assert.deepEqual(await stored(srv, img?.src as string), {
      type: 'image/png',
      width: 40,
      height: 30,
    })
    assert.equal(posts.length, 1)
    assert.equal(posts[0]?.token, jwt)
    assert.equal(new URL(posts[0]?.url as string).searchParams.get('site'), 'blog')

    // The stock dialog sends the same file without serverHeaders: refused (HTTP 200 with a state).
    const dialog = await page.evaluate(
      ([base64, name]) => (window as unknown as Harness).harness.dialog(base64, name),
      [picture.toString('base64'), 'clip_image001.png'] as const,
    )
    assert.notEqual(dialog.body.state, 'SUCCESS')
    assert.equal(dialog.body.code, 'UE_UNAUTHORIZED')
  })

  test('with uploadServiceEnable the pictures go through the page’s uploadService, with tus, as a pasted file does', async (t) => {
    const srv = await startTestServer(t, { auth: { tokens: [`alice:${TOKEN}`] } })
    const page = await editorPage(t, srv, {}, { serviceToken: TOKEN })
    if (!page) return
    const sent: string[] = []
    page.on('request', (r) => {
      const url = new URL(r.url())
      if (r.method() === 'POST' || r.method() === 'PATCH')
        sent.push(`${r.method()} ${url.pathname.replace(/\/tus\/.+$/, '/tus/<id>')}${url.search}`)
    })
    const pictures: Pict[] = [
      { blip: 'pngblip', bytes: png(40, 30), width: 40, height: 30 },
      { blip: 'wmetafile8', bytes: redWmf().subarray(22), width: 96, height: 48 },
    ]
    const sources = [
      { src: clip(1), width: 40, height: 30 },
      { src: clip(2), width: 96, height: 48 },
    ]
    await paste(page, wordHtml(sources), wordRtf(pictures))
    const done = await report(page)
    const metafiles = SOFFICE !== null
    assert.equal(done.replaced, metafiles ? 2 : 1, JSON.stringify(done.left))
    const shown = await images(page)
    const first = await stored(srv, shown[0]?.src as string)
    assert.deepEqual([first.type, first.width, first.height], ['image/png', 40, 30])
    if (metafiles) {
      const second = await stored(srv, shown[1]?.src as string)
      assert.deepEqual([second.type, second.width, second.height], ['image/png', 96, 48])
    }
    assert.deepEqual(
      sent.filter((r) => r.startsWith('POST')),
      Array(metafiles ? 2 : 1).fill('POST /tus'),
      'no multipart POST to the editor endpoint',
    )
  })

  test('when the editor drops one of the pasted pictures, the others still get their own, matched by address', async (t) => {
    const srv = await startTestServer(t, { auth: { tokens: [`alice:${TOKEN}`] } })
    const page = await editorPage(t, srv, { Authorization: `Bearer ${TOKEN}` })
    if (!page) return
    const sizes = [
      [40, 30],
      [50, 20],
      [30, 60],
    ] as const
    const pictures: Pict[] = sizes.map(([w, h]) => ({
      blip: 'pngblip',
      bytes: png(w, h),
      width: w,
      height: h,
    }))
    const sources = sizes.map(([w, h], i) => ({ src: clip(i + 1), width: w, height: h }))
    await page.evaluate(() => (window as unknown as Harness).harness.dropFromNextPaste(1))
    await paste(page, wordHtml(sources), wordRtf(pictures))
    const done = await report(page)
    assert.deepEqual([done.pictures, done.placeholders, done.replaced], [3, 2, 2])
    const shown = await images(page)
    assert.equal(shown.length, 2)
    for (const [i, at] of [0, 2].entries()) {
      const file = await stored(srv, shown[i]?.src as string)
      assert.deepEqual([file.width, file.height], sizes[at], `picture ${at + 1}`)
    }
  })
})
