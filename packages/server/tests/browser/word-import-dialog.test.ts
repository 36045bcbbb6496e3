import assert from 'node:assert/strict'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { launchChromium } from '../helpers/chromium.js'
import { docx, drawing, IMAGE_REL } from '../helpers/docx.js'
import { png } from '../helpers/fixtures.js'
import { startTestServer } from '../helpers/start-server.js'
import { tempDir } from '../helpers/temp-dir.js'
import { type TestContext, test } from '../helpers/test.js'

const TOKEN = 'word-import-token-0123456789ab'

/**
 * A stand-in for UEditor Plus's `contentimport` dialog page, as the stock one is built: a file
 * input `#contentImport` whose change handler calls the page's global `processWord(file)` for
 * `.docx`/`.doc` (the stock one converts in the browser with mammoth; this one records that it
 * ran), a `.file-tip`, a `.file-result`, `contentImport.data.result`, and `dialog.onok`, which
 * inserts the result into the editor.
 */
const DIALOG = `<!doctype html><meta charset="utf-8"><title>contentimport</title>
<div class="wrapper"><input type="file" id="contentImport"><div class="file-tip"></div>
<div class="file-result" style="display:none"></div></div>
<script>
var editor = parent.editor
var dialog = {}
var contentImport = { data: { result: null } }
window.convertedInBrowser = false
function processWord(file) {
  window.convertedInBrowser = true
  contentImport.data.result = '<p>converted in the browser</p>'
}
document.getElementById('contentImport').addEventListener('change', function () {
  var file = this.files[0]
  var ext = file.name.substring(file.name.lastIndexOf('.') + 1).toLowerCase()
  if (ext === 'docx' || ext === 'doc') processWord(file)
})
dialog.onok = function () {
  if (!contentImport.data.result) return false
  editor.execCommand('inserthtml', contentImport.data.result)
}
</script>`

/**
 * The editor's page: a stand-in editor with the options of the config answer and
 * `serverHeaders` carrying the token, the add-on installed, and the dialog opened in an iframe
 * as the editor opens its dialogs.
 */
const PAGE = `<!doctype html><meta charset="utf-8"><title>editor</title>
<div id="editor"></div>
<script src="/materials/loaders.iife.js"></script>
<script>
window.start = async function () {
  const serverUrl = '/ueditor'
  const serverHeaders = { Authorization: 'Bearer ${TOKEN}' }
  const options = await (await fetch(serverUrl + '?action=config', { headers: serverHeaders })).json()
  Object.assign(options, { serverUrl, serverHeaders })
  window.editor = {
    getOpt: (name) => options[name],
    getActionUrl: (action) => serverUrl + '?action=' + encodeURIComponent(action),
    execCommand: (command, html) => { document.getElementById('editor').innerHTML += html },
  }
  UEditorBackendLoaders.wordImport(window.editor)
  const frame = document.createElement('iframe')
  frame.id = 'edui_contentimport_iframe'
  frame.src = '/ueditor-plus/dialogs/contentimport/contentimport.html'
  const loaded = new Promise((resolve) => frame.addEventListener('load', resolve))
  document.body.appendChild(frame)
  await loaded
}
</script>`

/** The editor page and its contentimport dialog, served by a real server; null without Chromium. */
async function openDialog(t: TestContext) {
  const browser = await launchChromium(t)
  if (!browser) return null
  const site = await tempDir(t, 'ueditor-word-site-')
  await writeFile(join(site, 'index.html'), PAGE)
  const dialogDir = join(site, 'ueditor-plus', 'dialogs', 'contentimport')
  await mkdir(dialogDir, { recursive: true })
  await writeFile(join(dialogDir, 'contentimport.html'), DIALOG)
  const srv = await startTestServer(t, {
    auth: { tokens: [`alice:${TOKEN}`] },
    site: { dir: site },
  })
  const page = await browser.newPage()
  await page.goto(`${srv.url}/`)
  await page.evaluate(() => (window as unknown as { start(): Promise<void> }).start())
  const dialog = page.frame({ url: /contentimport\.html$/ })
  assert.ok(dialog, 'the dialog frame is open')
  return { srv, page, dialog }
}

test('the contentimport dialog sends a .docx to the server with the editor’s serverHeaders and inserts the HTML it answers, its picture stored', async (t) => {
  const opened = await openDialog(t)
  if (!opened) return
  const { srv, page, dialog } = opened

  const word = docx({
    body: `<w:p><w:r><w:rPr><w:b/></w:rPr><w:t>Imported on the server</w:t></w:r></w:p>${drawing('r:embed="rId5"')}`,
    rels: `<Relationship Id="rId5" Type="${IMAGE_REL}" Target="media/image1.png"/>`,
    extra: [{ name: 'word/media/image1.png', data: png(16, 8, { noise: true }) }],
  })
  await dialog.setInputFiles('#contentImport', {
    name: 'report.docx',
    mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    buffer: word,
  })
  await dialog.waitForFunction(
    () => document.querySelector('.file-result')?.innerHTML.includes('<img'),
    undefined,
    { timeout: 30_000 },
  )
  const shown = await dialog.evaluate(() => ({
    tip: document.querySelector('.file-tip')?.textContent ?? '',
    visible: (document.querySelector('.file-result') as HTMLElement).style.display !== 'none',
    inBrowser: (window as unknown as { convertedInBrowser: boolean }).convertedInBrowser,
  }))
  assert.equal(shown.inBrowser, false, 'the in-browser conversion never ran')
  assert.equal(shown.visible, true)
  assert.match(shown.tip, /转换成功/)

  await dialog.evaluate(() => (window as unknown as { dialog: { onok(): void } }).dialog.onok())
  const inserted = await page.evaluate(async () => {
    const img = document.querySelector('#editor img') as HTMLImageElement
    await img.decode()
    return {
      html: document.getElementById('editor')?.innerHTML ?? '',
      src: img.getAttribute('src') ?? '',
      width: img.naturalWidth,
    }
  })
  assert.match(inserted.html, /<strong>Imported on the server<\/strong>/)
  assert.match(inserted.src, /^\/uploads\/image\/.+\.png$/)
  assert.equal(inserted.width, 16)
  assert.equal((await srv.storedFiles()).length, 1)
})

test('a refusal of the server is shown in the dialog, and nothing is inserted', async (t) => {
  const opened = await openDialog(t)
  if (!opened) return
  const { srv, dialog } = opened
  await dialog.setInputFiles('#contentImport', {
    name: 'macros.docx',
    mimeType: 'application/octet-stream',
    buffer: docx({ extra: [{ name: 'word/vbaProject.bin', data: 'VBA' }] }),
  })
  await dialog.waitForFunction(
    () => /失败/.test(document.querySelector('.file-tip')?.textContent ?? ''),
    undefined,
    { timeout: 30_000 },
  )
  const tip = await dialog.evaluate(() => document.querySelector('.file-tip')?.textContent ?? '')
  assert.match(tip, /宏|macros/)
  const result = await dialog.evaluate(
    () =>
      (window as unknown as { contentImport: { data: { result: unknown } } }).contentImport.data
        .result,
  )
  assert.equal(result, null)
  assert.deepEqual(await srv.storedFiles(), [])
})
