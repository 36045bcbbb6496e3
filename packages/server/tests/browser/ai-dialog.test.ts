import assert from 'node:assert/strict'
import { startAiUpstream } from '../helpers/ai-upstream.js'
import { ALICE, TOKENS } from '../helpers/auth.js'
import { launchChromium, startPageOrigin } from '../helpers/chromium.js'
import { eventually } from '../helpers/eventually.js'
import { startTestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'

interface DialogRun {
  texts: string[]
  end: unknown
  status: number
}

describe('the AI action in Chromium, called the way the UEditor Plus dialog calls it', () => {
  test('a page on another origin reads the config, posts with the user token and gets the stream piece by piece', async (t) => {
    const pageOrigin = await startPageOrigin(t)
    const upstream = await startAiUpstream(t)
    const srv = await startTestServer(t, {
      auth: { tokens: TOKENS },
      http: { corsOrigins: [pageOrigin] },
      ai: { baseUrl: upstream.baseUrl, apiKey: 'sk-browser-test-key-0123456789', model: 'm' },
    })
    const browser = await launchChromium(t)
    if (!browser) return
    const page = await browser.newPage()
    await page.goto(`${pageOrigin}/`)
    const run: DialogRun = await page.evaluate(
      async ({ endpoint, token }) => {
        const config = await (await fetch(`${endpoint}?action=config`)).json()
        // Cross-origin, ai.url would be set to this absolute URL; the port is only known once
        // the server listens, so the relative URL from config is resolved here instead.
        const url = new URL(config.ai.driverConfig.url, endpoint).href
        const res = await fetch(url, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ systemPrompt: '翻译成英文', prompt: '你好，世界' }),
        })
        const reader = (res.body as ReadableStream<Uint8Array>).getReader()
        const decoder = new TextDecoder('utf-8')
        const texts: string[] = []
        let end: unknown = null
        let buffer = ''
        for (;;) {
          const { done, value } = await reader.read()
          if (done) break
          buffer += decoder.decode(value, { stream: true })
          const lines = buffer.split('\n')
          buffer = lines.pop() ?? ''
          for (const line of lines) {
            if (!line.startsWith('data:')) continue
            const event = JSON.parse(line.slice(5).trim())
            if (event.type === 'data') texts.push(event.data)
            else end = event
          }
        }
        return { texts, end, status: res.status }
      },
      { endpoint: `${srv.url}/ueditor`, token: ALICE },
    )
    assert.equal(run.status, 200)
    assert.deepEqual(run.texts, ['Hello', ', ', 'world'])
    assert.deepEqual(run.end, { type: 'end', data: '' })
    assert.equal(upstream.requests[0]?.authorization, 'Bearer sk-browser-test-key-0123456789')
  })

  test('closing the dialog mid-answer (an aborted fetch in the browser) aborts the upstream call', async (t) => {
    const upstream = await startAiUpstream(t)
    upstream.mode = 'drip'
    const srv = await startTestServer(t, {
      auth: { tokens: TOKENS },
      ai: { baseUrl: upstream.baseUrl, apiKey: 'sk-browser-test-key-0123456789', model: 'm' },
    })
    const browser = await launchChromium(t)
    if (!browser) return
    const page = await browser.newPage()
    await page.goto(`${srv.url}/healthz`)
    const first: string = await page.evaluate(async (token) => {
      const controller = new AbortController()
      const res = await fetch('/ueditor?action=ai', {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ systemPrompt: 'Write forever', prompt: '' }),
        signal: controller.signal,
      })
      const reader = (res.body as ReadableStream<Uint8Array>).getReader()
      const { value } = await reader.read()
      controller.abort()
      return new TextDecoder().decode(value)
    }, ALICE)
    assert.match(first, /drip/)
    const closed = await eventually(async () => upstream.closedEarly(), {
      until: (n) => n === 1,
      timeoutMs: 10_000,
      what: 'the upstream call closed early',
    })
    assert.equal(closed, 1)
  })
})
