import assert from 'node:assert/strict'
import { ALICE, bearer, TOKENS } from '../helpers/auth.js'
import { startClosingOrigin } from '../helpers/origin-server.js'
import { startTestServer } from '../helpers/start-server.js'
import { test } from '../helpers/test.js'

const EVENTS = 4_000

/**
 * An OpenAI-compatible upstream that writes a whole streamed answer at once and closes its side
 * (`Connection: close`, then FIN), as a proxy in front of a fast model may. Node's fetch (which
 * the `openai` client uses) ends the process with an assertion when that FIN reaches a parser
 * that a slow reader has paused (docs/security.md, row S65).
 */
function streamedAnswer(): Buffer {
  const event = (content: string) => {
    const choices = [{ index: 0, delta: { content }, finish_reason: null }]
    const chunk = {
      id: 'c',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'test-model',
      choices,
    }
    return `data: ${JSON.stringify(chunk)}\n\n`
  }
  const events = Array.from({ length: EVENTS }, (_, i) => event(`word${i} `))
  return Buffer.from(`${events.join('')}data: [DONE]\n\n`)
}

test('an AI upstream that sends a long answer at once and closes its connection is relayed whole, and the server keeps running', async (t) => {
  const host = await startClosingOrigin(t, 'text/event-stream', streamedAnswer())
  const srv = await startTestServer(t, {
    auth: { tokens: TOKENS },
    ai: {
      baseUrl: `http://${host}/v1`,
      apiKey: 'sk-test',
      model: 'test-model',
      maxOutputTokens: 100_000,
      requestsPerMinute: 0,
      dailyTokens: 0,
      concurrencyPerUser: 10,
    },
  })
  for (let round = 0; round < 3; round++) {
    const answers = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const res = await fetch(srv.action('ai'), {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...bearer(ALICE) },
          body: JSON.stringify({ systemPrompt: 'x', prompt: 'y' }),
        })
        return res.text()
      }),
    )
    for (const text of answers) assert.ok(text.includes(`word${EVENTS - 1} `), text.slice(-300))
  }
  assert.equal((await fetch(`${srv.url}/healthz`)).status, 200)
})
