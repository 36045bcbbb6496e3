import { createServer } from 'node:http'
import { readFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Server } from '@tus/server'
import { FileStore } from '@tus/file-store'
import { chromium } from 'playwright-core'

const dir = mkdtempSync(join(tmpdir(), 'tus-try-'))
const tus = new Server({
  path: '/tus',
  datastore: new FileStore({ directory: dir }),
  onUploadFinish: async (req, upload) => ({
    status_code: 200,
    body: JSON.stringify({ state: 'SUCCESS', url: '/x/' + upload.id, title: 't', original: upload.metadata.filename, type: '.png', size: upload.size }),
    headers: { 'Content-Type': 'application/json' },
  }),
})
const seen = []
const server = createServer((req, res) => {
  seen.push(`${req.method} ${req.url} ${req.headers['authorization'] ?? ''} ${req.headers['upload-offset'] ?? ''}`)
  if (req.url.startsWith('/tus')) return tus.handle(req, res)
  if (req.url.startsWith('/ueditor?action=config')) { res.setHeader('content-type','application/json'); return res.end(JSON.stringify({ uploadTusUrl: '/tus', imageUrlPrefix: '' })) }
  if (req.url === '/l.js') { res.setHeader('content-type','text/javascript'); return res.end(readFileSync('../../loaders/dist/bundle/loaders.iife.min.js')) }
  res.setHeader('content-type','text/html'); res.end('<!doctype html><script src="/l.js"></script>')
})
await new Promise(r => server.listen(0, '127.0.0.1', r))
const url = `http://127.0.0.1:${server.address().port}`
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless','--no-sandbox'] })
const page = await browser.newPage()
page.on('console', m => console.log('page:', m.text()))
await page.goto(url + '/')
const out = await page.evaluate(async () => {
  const up = UEditorBackendLoaders.uploadService({ serverUrl: '/ueditor', token: 'abc', tusChunkSize: 1024 * 1024 })
  const bytes = new Uint8Array(3 * 1024 * 1024 + 5)
  const file = new File([bytes], 'big.png', { type: 'image/png', lastModified: 1 })
  const run = () => new Promise((resolve) => {
    const rec = { progress: [] }
    up('image', file, { progress: p => rec.progress.push(p), success: r => { rec.ok = r; resolve(rec) }, error: m => { rec.err = m; resolve(rec) } }, { from: 'upload' })
    return rec
  })
  // first: abort after first progress > 0.3
  const first = new Promise((resolve) => {
    const rec = { progress: [] }
    up('image', file, { progress: p => { rec.progress.push(p); if (p > 0.3) up.abort() }, success: r => { rec.ok = r; resolve(rec) }, error: m => { rec.err = m; resolve(rec) } }, { from: 'upload' })
  })
  const a = await first
  const keys = Object.keys(localStorage)
  const b = await run()
  return { a, keys, b, after: Object.keys(localStorage) }
})
console.log(JSON.stringify(out, null, 1))
console.log(seen.join('\n'))
await browser.close(); server.close()
