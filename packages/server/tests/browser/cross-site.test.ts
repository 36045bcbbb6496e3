import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { listFiles, uploadFile } from '../helpers/auth.js'
import { launchChromium } from '../helpers/chromium.js'
import { startTestServer } from '../helpers/start-server.js'
import { describe, type TestContext, test } from '../helpers/test.js'

/** Pages of another site (127.0.0.1, while the server is reached as localhost). */
async function startOtherSite(t: TestContext, pages: Record<string, string>): Promise<string> {
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(pages[req.url ?? ''] ?? '<!doctype html><title>blank</title>')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** The host app's session: a cookie, or the same value in a header its own editor page sends. */
const hook = (request: Request) => {
  const cookie = /(?:^|;\s*)session=(\w+)/.exec(request.headers.get('cookie') ?? '')?.[1]
  const user = cookie ?? request.headers.get('x-session')
  return user ? { user } : null
}

describe('cookie sessions in Chromium: another site’s page cannot write, the editor’s own pages can', () => {
  test('a cross-site form post to delete is refused with UE_CROSS_SITE; same-origin XHR uploads and deletes work', async (t) => {
    const browser = await launchChromium(t)
    if (!browser) return
    const srv = await startTestServer(t, { delete: { enabled: true } }, { authorize: hook })
    const port = new URL(srv.url).port
    const endpoint = `http://localhost:${port}/ueditor`
    const victim = (await uploadFile(srv, { Cookie: 'session=alice' })).body.url as string
    const evil = `<!doctype html><form method="post" action="${endpoint}?action=deletefile">
      <input name="url" value="${victim}"></form><script>document.forms[0].submit()</script>`
    const site = await startOtherSite(t, { '/evil.html': evil })

    const context = await browser.newContext()
    // What a host app sets for a cross-site embed: the cookie goes along on every site's posts.
    await context.addCookies([
      {
        name: 'session',
        value: 'alice',
        domain: 'localhost',
        path: '/',
        sameSite: 'None',
        secure: true,
      },
    ])
    const page = await context.newPage()

    // 1. Another site's page posts a plain form: the cookie goes along, the delete does not.
    const [response] = await Promise.all([
      page.waitForResponse(`${endpoint}?action=deletefile`),
      page.goto(`${site}/evil.html`),
    ])
    // The hook found the cookie (else this would be UE_UNAUTHORIZED); the origin refused it.
    const refused = (await response.json()) as { code: string }
    assert.equal(refused.code, 'UE_CROSS_SITE')
    assert.deepEqual((await listFiles(srv, { Cookie: 'session=alice' })).urls, [victim])

    // 2. A same-origin page uploads with XHR and FormData, as UEditor does, then deletes.
    await page.goto(`http://localhost:${port}/healthz`)
    const same = await page.evaluate(async (url) => {
      const send = (action: string, body: FormData | URLSearchParams) =>
        new Promise<{ state: string; url?: string; code?: string }>((resolve, reject) => {
          const xhr = new XMLHttpRequest()
          xhr.open('POST', `${url}?action=${action}`)
          xhr.onload = () => resolve(JSON.parse(xhr.responseText))
          xhr.onerror = () => reject(new Error('network error'))
          xhr.send(body)
        })
      const form = new FormData()
      form.append('file', new Blob(['%PDF-1.4\n%%EOF\n'], { type: 'application/pdf' }), 'a.pdf')
      const stored = await send('file', form)
      const deleted = await send('deletefile', new URLSearchParams({ url: stored.url ?? '' }))
      return { stored, deleted }
    }, '/ueditor')
    assert.equal(same.stored.state, 'SUCCESS', JSON.stringify(same))
    assert.equal(same.deleted.state, 'SUCCESS', JSON.stringify(same))
  })

  test('an editor page on another site listed in http.corsOrigins uploads with XHR', async (t) => {
    const browser = await launchChromium(t)
    if (!browser) return
    const site = await startOtherSite(t, {})
    const srv = await startTestServer(
      t,
      { auth: { header: 'X-Session' }, http: { corsOrigins: [site] } },
      { authorize: hook },
    )
    const endpoint = `http://localhost:${new URL(srv.url).port}/ueditor`
    const page = await browser.newPage()
    await page.goto(`${site}/`)
    // The host app's session travels in a header (`serverHeaders`), which the hook reads.
    const answer = await page.evaluate(async (url) => {
      return new Promise<{ state: string; code?: string }>((resolve, reject) => {
        const xhr = new XMLHttpRequest()
        xhr.open('POST', `${url}?action=file`)
        xhr.setRequestHeader('X-Session', 'alice')
        xhr.onload = () => resolve(JSON.parse(xhr.responseText))
        xhr.onerror = () => reject(new Error('network error'))
        const form = new FormData()
        form.append('file', new Blob(['%PDF-1.4\n%%EOF\n'], { type: 'application/pdf' }), 'a.pdf')
        xhr.send(form)
      })
    }, endpoint)
    assert.equal(answer.state, 'SUCCESS', JSON.stringify(answer))
    assert.equal((await listFiles(srv, { 'X-Session': 'alice' })).urls.length, 1)
  })
})
