import assert from 'node:assert/strict'
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startServer } from '../../src/standalone/serve.js'
import { launchChromium } from '../helpers/chromium.js'
import { test } from '../helpers/test.js'

// Tests run from packages/server/dist/tests/browser; the page lives in examples/site.
const SITE = fileURLToPath(new URL('../../../../../examples/site/', import.meta.url))

/**
 * Stand-ins for the built editor's two scripts. Like UEditor Plus, `UE.getEditor` puts the
 * editor's box in front of its holder (wherever the page's parser left the holder) and then
 * loads the server's config from `serverUrl`; it also records what it saw.
 */
const CONFIG_JS = `window.UEDITOR_CONFIG = { UEDITOR_HOME_URL: window.UEDITOR_HOME_URL }\n`
const ALL_JS = `window.UE = {
  getEditor: function (id, options) {
    var holder = document.getElementById(id)
    var seen = (window.standIn = {
      holderParent: holder && holder.parentNode.nodeName,
      homeUrl: window.UEDITOR_CONFIG.UEDITOR_HOME_URL,
      serverUrl: options.serverUrl,
    })
    var box = document.createElement('div')
    box.id = 'stand-in-editor'
    box.style.height = holder.style.height
    box.textContent = 'editor'
    holder.parentNode.insertBefore(box, holder)
    fetch(options.serverUrl + '?action=config')
      .then(function (res) { return res.json() })
      .then(function (config) {
        seen.imageActionName = config.imageActionName
        box.setAttribute('data-ready', 'true')
      })
    return { container: box }
  },
}
`

interface Seen {
  holderParent: string | null
  homeUrl: string
  serverUrl: string
  imageActionName?: string
}

test('the first-run page from examples/site, served with UEDITOR_STATIC_DIR, puts the editor holder in the body and creates the editor', async (t) => {
  const base = await mkdtemp(join(tmpdir(), 'ueditor-first-run-'))
  t.after(() => rm(base, { recursive: true, force: true }))
  const site = join(base, 'site')
  await cp(SITE, site, { recursive: true })
  await mkdir(join(site, 'ueditor-plus'), { recursive: true })
  await writeFile(join(site, 'ueditor-plus', 'ueditor.config.js'), CONFIG_JS)
  await writeFile(join(site, 'ueditor-plus', 'ueditor.all.js'), ALL_JS)
  const srv = await startServer({
    env: {
      UEDITOR_STATIC_DIR: site,
      UEDITOR_DATA_DIR: join(base, 'data'),
      HOST: '127.0.0.1',
      PORT: '0',
      UEDITOR_LOG_LEVEL: 'silent',
    },
  })
  t.after(() => srv.close())

  const browser = await launchChromium(t)
  if (!browser) return
  const page = await browser.newPage()
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(e.message))
  const loaded = await page.goto(`${srv.url}/`)
  assert.equal(loaded?.status(), 200)
  await page.waitForSelector('#stand-in-editor[data-ready="true"]', { state: 'attached' })
  const seen = (await page.evaluate('window.standIn')) as Seen
  assert.deepEqual(seen, {
    holderParent: 'BODY',
    homeUrl: '/ueditor-plus/',
    serverUrl: '/ueditor',
    imageActionName: 'image',
  })
  const box = await page.locator('#stand-in-editor').boundingBox()
  assert.equal(box?.height, 400, 'the editor box is laid out in the page, 400 px high')
  assert.deepEqual(errors, [])
})
