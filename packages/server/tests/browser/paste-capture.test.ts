import assert from 'node:assert/strict'
import type { Page } from 'playwright-core'
import { type RunningServer, startServer } from '../../src/standalone/serve.js'
import { launchChromium, type PageFile, startPageOrigin } from '../helpers/chromium.js'
import { png } from '../helpers/fixtures.js'
import { multipartBody } from '../helpers/multipart.js'
import { originImages, startOriginServer } from '../helpers/origin-server.js'
import { freePort } from '../helpers/ports.js'
import { startTestServer } from '../helpers/start-server.js'
import { tempDir } from '../helpers/temp-dir.js'
import { describe, type TestContext, test } from '../helpers/test.js'

interface PastedImage {
  src: string
  result: string | null
}

describe('pasting into a cross-origin editor, with the UEditor Plus capture rule in Chromium', () => {
  test('the user’s own uploads stay, an allow-listed loopback host is captured, a foreign image is sent and refused', async (t) => {
    const pageOrigin = await startPageOrigin(t)
    const origin = await startOriginServer(t, await originImages())
    const srv = await startTestServer(t, {
      publicUrl: 'https://ue.example.com/uploads/',
      http: { corsOrigins: [pageOrigin], jsonpActions: ['config', 'list', 'catch'] },
      catcher: { allowHosts: [origin.host] },
    })
    const { body, contentType } = multipartBody([
      { name: 'upfile', filename: 'own.png', contentType: 'image/png', value: png(8, 8) },
    ])
    const upload = await fetch(srv.action('image'), {
      method: 'POST',
      body,
      headers: { 'Content-Type': contentType },
    })
    const own = ((await upload.json()) as { url: string }).url
    assert.match(own, /^https:\/\/ue\.example\.com\/uploads\/image\//)

    const browser = await launchChromium(t)
    if (!browser) return
    const page = await browser.newPage()
    await page.goto(`${pageOrigin}/`)
    const pasted: PastedImage[] = await page.evaluate(
      async ({ endpoint, sources }) => {
        // Cross-origin, the editor reads config and sends catch as JSONP script tags.
        let n = 0
        const jsonp = (url: string) =>
          new Promise<Record<string, unknown>>((resolve, reject) => {
            const name = `bd__editor__t${n++}`
            const w = window as unknown as Record<string, unknown>
            w[name] = (answer: Record<string, unknown>) => resolve(answer)
            const script = document.createElement('script')
            script.src = `${url}&callback=${name}`
            script.onerror = () => reject(new Error(`script failed: ${url}`))
            document.head.appendChild(script)
          })
        const config = await jsonp(`${endpoint}?action=config`)
        const localDomains = config.catcherLocalDomain as string[]
        // The pasted article, in a document that loads nothing (no request leaves loopback).
        const doc = document.implementation.createHTMLDocument('pasted')
        for (const source of sources) {
          const img = doc.createElement('img')
          img.setAttribute('_src', source)
          doc.body.appendChild(img)
        }
        // The editor's test: local when the URL contains the page's host or any entry, or
        // starts with "." or "/"; each afterpaste pass sends the first non-local image, then
        // looks again.
        const isLocal = (src: string) =>
          src.indexOf(location.host) !== -1 ||
          /(^\.)|(^\/)/.test(src) ||
          localDomains.some((d) => src.indexOf(d) !== -1)
        for (;;) {
          const next = [...doc.querySelectorAll('img')].find((img) => {
            if (img.getAttribute('data-catch-result')) return false
            const src = img.getAttribute('_src') || img.src || ''
            return /^(https?|ftp):/i.test(src) && !isLocal(src)
          })
          if (!next) break
          const src = next.getAttribute('_src') as string
          const field = encodeURIComponent(`${config.catcherFieldName}[]`)
          const answer = await jsonp(
            `${endpoint}?${field}=${encodeURIComponent(src)}&action=${config.catcherActionName}`,
          )
          const entry = (answer.list as { state: string; url: string }[])[0]
          const ok = entry?.state === 'SUCCESS'
          const result = ok ? `${config.catcherUrlPrefix}${entry.url}` : 'img-cracked.png'
          next.setAttribute('_src', result)
          next.setAttribute('data-catch-result', ok ? 'success' : 'fail')
        }
        return [...doc.querySelectorAll('img')].map((img) => ({
          src: img.getAttribute('_src') as string,
          result: img.getAttribute('data-catch-result'),
        }))
      },
      {
        endpoint: `${srv.url}/ueditor`,
        sources: [own, origin.url('/a.png'), 'http://10.0.0.1/b.png'],
      },
    )
    assert.deepEqual(pasted[0], { src: own, result: null })
    assert.equal(pasted[1]?.result, 'success')
    assert.match(pasted[1]?.src ?? '', /^https:\/\/ue\.example\.com\/uploads\/catch\//)
    assert.deepEqual(pasted[2], { src: 'img-cracked.png', result: 'fail' })
    assert.deepEqual(origin.paths(), ['/a.png'])
  })
})

/**
 * A stand-in for UEditor Plus built as the real one behaves after a paste. `UE.getEditor` keeps
 * the page's options, starts its plugins (capture among them) at once, and loads `config` a
 * moment later, over JSONP when `serverUrl` is on another origin, merging the answer over the
 * options. The capture plugin reads `catchRemoteImageEnable` once, when it starts (before the
 * answer is in), and `catcherLocalDomain`, the action, field and prefix again when the answer
 * arrives. After a paste it sends the first remote image of the article to `catch` (JSONP
 * across origins), one at a time; a failed answer replaces the picture with
 * `themes/default/images/img-cracked.png` and `data-catch-result="fail"`. With
 * `pluginsAfterConfig`, the plugins start only once the answer is in: both orders happen.
 */
const EDITOR_ALL_JS = `(function () {
  var uid = 0
  function crossOrigin(url) { return new URL(url, location.href).origin !== location.origin }
  function jsonp(url, onsuccess, onerror) {
    var name = 'bd__editor__' + Math.random().toString(36).slice(2, 10)
    var script = document.createElement('script')
    window[name] = function (answer) { delete window[name]; script.remove(); onsuccess(answer) }
    script.onerror = function () { delete window[name]; script.remove(); onerror() }
    script.src = url + '&callback=' + name
    document.head.appendChild(script)
  }
  function capturePlugin(me) {
    if (me.options.catchRemoteImageEnable === false) return
    me.capturing = true
    var local, action, prefix, field, busy = false
    function read() {
      local = me.getOpt('catcherLocalDomain')
      action = me.getActionUrl(me.getOpt('catcherActionName'))
      prefix = me.getOpt('catcherUrlPrefix')
      field = me.getOpt('catcherFieldName')
    }
    read()
    me.addListener('serverConfigLoaded', read)
    function isLocal(src) {
      if (src.indexOf(location.host) !== -1 || /^[./]/.test(src)) return true
      return (local || []).some(function (d) { return src.indexOf(d) !== -1 })
    }
    function next() {
      if (busy) return
      busy = true
      var images = me.document.querySelectorAll('img')
      for (var i = 0; i < images.length; i++) {
        var img = images[i]
        if (img.getAttribute('data-catch-result')) continue
        var src = img.getAttribute('_src') || img.src || ''
        if (/^(https?|ftp):/i.test(src) && !isLocal(src)) {
          send(img, src)
          img.setAttribute('_src', src)
          img.src = me.options.themePath + 'default/images/spacer.gif'
          return
        }
      }
      busy = false
      me.settled++
    }
    function send(img, src) {
      if (!crossOrigin(action)) throw new Error('this stand-in only speaks JSONP')
      var url = action + '&' + encodeURIComponent(field + '[]') + '=' + encodeURIComponent(src)
      jsonp(url, function (info) {
        var first = info.list[0]
        var now = first.state === 'SUCCESS' ? prefix + first.url : me.options.themePath + 'default/images/img-cracked.png'
        img.src = now
        img.setAttribute('_src', now)
        img.setAttribute('data-catch-result', first.state === 'SUCCESS' ? 'success' : 'fail')
        busy = false
        setTimeout(next)
      }, function () { busy = false; setTimeout(next) })
    }
    me.addListener('afterpaste', next)
  }
  window.UE = {
    getEditor: function (id, options) {
      var listeners = {}
      var me = {
        uid: uid++,
        settled: 0,
        configLoaded: false,
        options: Object.assign({}, window.UEDITOR_CONFIG, options),
        getOpt: function (key) { return me.options[key] },
        getActionUrl: function (action) {
          var server = me.options.serverUrl
          return server + (server.indexOf('?') === -1 ? '?' : '&') + 'action=' + (me.getOpt(action) || action)
        },
        addListener: function (type, fn) { (listeners[type] = listeners[type] || []).push(fn) },
        fireEvent: function (type) { (listeners[type] || []).forEach(function (fn) { fn() }) },
      }
      me.options.themePath = me.options.UEDITOR_HOME_URL + 'themes/'
      var holder = document.getElementById(id)
      var frame = document.createElement('iframe')
      holder.parentNode.insertBefore(frame, holder)
      me.document = frame.contentDocument
      me.document.body.contentEditable = 'true'
      me.document.addEventListener('paste', function (e) {
        e.preventDefault()
        var box = me.document.createElement('div')
        box.innerHTML = e.clipboardData.getData('text/html')
        box.querySelectorAll('img').forEach(function (img) { img.setAttribute('_src', img.getAttribute('src')) })
        while (box.firstChild) me.document.body.appendChild(box.firstChild)
        me.fireEvent('afterpaste')
        if (!me.capturing) me.settled++
      })
      if (me.options.pluginsAfterConfig) me.addListener('serverConfigLoaded', function () { capturePlugin(me) })
      else capturePlugin(me)
      setTimeout(function () {
        var url = me.getActionUrl('config')
        if (!crossOrigin(url)) throw new Error('this stand-in only speaks JSONP')
        jsonp(url, function (config) {
          Object.assign(me.options, config)
          me.configLoaded = true
          me.fireEvent('serverConfigLoaded')
        }, function () {})
      })
      window.standInEditor = me
      return me
    },
  }
})()
`

/** The README's first-run page, on another origin than the server. */
function editorPage(serverUrl: string, pluginsAfterConfig: boolean): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>UEditor Plus</title>
  <script>window.UEDITOR_HOME_URL = '/ueditor-plus/'</script>
  <script src="/ueditor-plus/ueditor.config.js"></script>
  <script src="/ueditor-plus/ueditor.all.js"></script>
</head>
<body>
  <script id="editor" type="text/plain" style="height:400px"></script>
  <script>UE.getEditor('editor', { serverUrl: '${serverUrl}/ueditor', pluginsAfterConfig: ${pluginsAfterConfig} })</script>
</body>
</html>`
}

/**
 * A server on 127.0.0.1 started from environment variables only, as the README's command line
 * does; `env` gets the server's own URL (its port is picked first, for `UEDITOR_PUBLIC_URL`).
 */
async function startFromEnv(
  t: TestContext,
  env: (serverUrl: string) => NodeJS.ProcessEnv,
): Promise<RunningServer> {
  const port = await freePort()
  const dataDir = await tempDir(t, 'ueditor-paste-')
  const server = await startServer({
    env: {
      ...env(`http://127.0.0.1:${port}`),
      UEDITOR_DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      UEDITOR_LOG_LEVEL: 'silent',
    },
  })
  t.after(() => server.close())
  return server
}

interface Pasted {
  src: string | null
  _src: string | null
  result: string | null
  width: number
}

/**
 * The page on `http://localhost:<port>` (the server is on 127.0.0.1: two origins), the editor
 * ready; pastes an article with `picture` and returns the image once capture has settled.
 */
async function pasteIntoEditor(
  t: TestContext,
  serverFor: (pageOrigin: string) => Promise<RunningServer>,
  picture: string,
  pluginsAfterConfig: boolean,
): Promise<{ pasted: Pasted; catches: string[]; server: RunningServer } | null> {
  const files: Record<string, PageFile> = {
    '/ueditor-plus/ueditor.config.js': {
      type: 'text/javascript',
      body: 'window.UEDITOR_CONFIG = { UEDITOR_HOME_URL: window.UEDITOR_HOME_URL, catchRemoteImageEnable: true }\n',
    },
    '/ueditor-plus/ueditor.all.js': { type: 'text/javascript', body: EDITOR_ALL_JS },
  }
  const pageOrigin = (await startPageOrigin(t, files)).replace('127.0.0.1', 'localhost')
  const server = await serverFor(pageOrigin)
  files['/index.html'] = {
    type: 'text/html; charset=utf-8',
    body: editorPage(server.url, pluginsAfterConfig),
  }
  const browser = await launchChromium(t)
  if (!browser) return null
  const page = await browser.newPage()
  const catches: string[] = []
  page.on('request', (r) => {
    if (/[?&]action=catch\b/.test(r.url())) catches.push(r.url())
  })
  await page.goto(`${pageOrigin}/index.html`)
  await page.waitForFunction(() => (window as unknown as Editor).standInEditor.configLoaded)
  const pasted = await paste(
    page,
    `<p>From a news site:</p><p><img src="${picture}" alt="photo"></p>`,
  )
  return { pasted, catches, server }
}

interface Editor {
  standInEditor: { configLoaded: boolean; settled: number; document: Document }
}

/** A paste of `html` into the editing area, and the image once the capture pass has settled. */
async function paste(page: Page, html: string): Promise<Pasted> {
  const before = await page.evaluate(() => (window as unknown as Editor).standInEditor.settled)
  await page.evaluate((text) => {
    const doc = (window as unknown as Editor).standInEditor.document
    const data = new DataTransfer()
    data.setData('text/html', text)
    doc.body.dispatchEvent(
      new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }),
    )
  }, html)
  await page.waitForFunction(
    (n) => (window as unknown as Editor).standInEditor.settled > n,
    before,
    { timeout: 20_000 },
  )
  return page.evaluate(async () => {
    const img = (window as unknown as Editor).standInEditor.document.querySelector('img')
    if (!img) throw new Error('nothing was pasted')
    await img.decode().catch(() => {})
    return {
      src: img.getAttribute('src'),
      _src: img.getAttribute('_src'),
      result: img.getAttribute('data-catch-result'),
      width: img.naturalWidth,
    }
  })
}

describe('a pasted remote picture in a cross-origin editor set up as the README says', () => {
  for (const pluginsAfterConfig of [false, true]) {
    const order = pluginsAfterConfig ? 'after' : 'before'
    test(`with the README's settings, the picture keeps its original address and is shown (plugins started ${order} the config answer)`, async (t) => {
      const remote = await startOriginServer(t, await originImages(), '127.0.0.2')
      const picture = remote.url('/a.png')
      const ran = await pasteIntoEditor(
        t,
        (pageOrigin) =>
          startFromEnv(t, (serverUrl) => ({
            UEDITOR_CORS_ORIGINS: pageOrigin,
            UEDITOR_PUBLIC_URL: `${serverUrl}/uploads/`,
          })),
        picture,
        pluginsAfterConfig,
      )
      if (!ran) return
      assert.deepEqual(ran.pasted, { src: picture, _src: picture, result: null, width: 16 })
      assert.deepEqual(ran.catches, [], 'the editor sent nothing to catch')
      assert.deepEqual(remote.paths(), ['/a.png'], 'only the browser fetched the picture')
    })
  }

  test('with capture turned on as the README says, the pasted picture is captured and shown from the server', async (t) => {
    const remote = await startOriginServer(t, await originImages(), '127.0.0.2')
    const picture = remote.url('/a.png')
    const ran = await pasteIntoEditor(
      t,
      (pageOrigin) =>
        startFromEnv(t, (serverUrl) => ({
          UEDITOR_CORS_ORIGINS: pageOrigin,
          UEDITOR_PUBLIC_URL: `${serverUrl}/uploads/`,
          UEDITOR_AUTH: 'none',
          UEDITOR_JSONP_ACTIONS: 'config,list,catch',
          UEDITOR_CATCHER_ALLOW_HOSTS: remote.host,
        })),
      picture,
      false,
    )
    if (!ran) return
    assert.equal(ran.pasted.result, 'success')
    assert.match(ran.pasted.src ?? '', /^http:\/\/127\.0\.0\.1:\d+\/uploads\/catch\/.+\.png$/)
    assert.equal(ran.pasted._src, ran.pasted.src)
    assert.equal(ran.pasted.width, 16, 'the captured copy is shown')
    assert.equal(ran.catches.length, 1)
  })
})
