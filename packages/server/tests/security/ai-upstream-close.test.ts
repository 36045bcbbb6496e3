import assert from 'node:assert/strict'
import { createServer, type Socket } from 'node:net'
import { test } from 'node:test'
import { ALICE, bearer, TOKENS } from '../helpers/auth.js'
import { startTestServer } from '../helpers/start-server.js'

const EVENTS = 4_000

/**
 * An OpenAI-compatible upstream that writes a whole streamed answer at once and closes its side
 * (`Connection: close`, then FIN), as a proxy in front of a fast model may. Node's fetch (which
 * the `openai` client uses) ends the process with an assertion when that FIN reaches a parser
 * that a slow reader has paused (docs/security.md, row S65).
 */
async function closingUpstream(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const sockets = new Set<Socket>()
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
  const body = Buffer.from(`${events.join('')}data: [DONE]\n\n`)
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    let head = ''
    socket.on('data', (chunk) => {
      head += chunk.toString('latin1')
      const end = head.indexOf('\r\n\r\n')
      if (end < 0) return
      const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0)
      if (head.length - end - 4 < length) return
      socket.removeAllListeners('data')
      socket.write(
        'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n' +
          `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      )
      socket.end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  const address = server.address()
  assert.ok(address && typeof address === 'object')
  return `http://127.0.0.1:${address.port}/v1`
}

test('an AI upstream that sends a long answer at once and closes its connection is relayed whole, and the server keeps running', async (t) => {
  const baseUrl = await closingUpstream(t)
  const srv = await startTestServer(t, {
    auth: { tokens: TOKENS },
    ai: {
      baseUrl,
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
