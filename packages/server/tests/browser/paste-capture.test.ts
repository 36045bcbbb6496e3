import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { launchChromium, startPageOrigin } from '../helpers/chromium.js'
import { png } from '../helpers/fixtures.js'
import { multipartBody } from '../helpers/multipart.js'
import { originImages, startOriginServer } from '../helpers/origin-server.js'
import { startTestServer } from '../helpers/start-server.js'

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
