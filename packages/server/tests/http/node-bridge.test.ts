import assert from 'node:assert/strict'
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type TestContext, test } from 'node:test'
import { clientAddress, parseTrustedProxies } from '../../src/http/client-address.js'
import { toNodeHandler } from '../../src/http/node.js'
import type { ConnectionInfo } from '../../src/shared/request-info.js'
import type { FetchHandler } from '../../src/shared/types.js'

async function serve(t: TestContext, handler: FetchHandler): Promise<string> {
  const server = createServer(toNodeHandler(handler))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.after(async () => {
    server.closeAllConnections()
    await new Promise((r) => server.close(r))
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

test('a complete answer goes out in one piece with a Content-Length', async (t) => {
  const base = await serve(t, async () => Response.json({ hello: 'world' }))
  const res = await fetch(`${base}/x`)
  assert.equal(res.headers.get('content-length'), String('{"hello":"world"}'.length))
  assert.equal(res.headers.get('transfer-encoding'), null)
  assert.deepEqual(await res.json(), { hello: 'world' })
})

test('a streamed answer is written chunk by chunk without a length', async (t) => {
  const base = await serve(t, async () => {
    const parts = ['one ', 'two ', 'three']
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = parts.shift()
        if (next === undefined) controller.close()
        else controller.enqueue(new TextEncoder().encode(next))
      },
    })
    return new Response(body, { headers: { 'Content-Type': 'text/plain' } })
  })
  const res = await fetch(`${base}/x`)
  assert.equal(res.headers.get('transfer-encoding'), 'chunked')
  assert.equal(await res.text(), 'one two three')
})

test('the handler gets a Request it can read, and the peer address beside it', async (t) => {
  let seen: ConnectionInfo | undefined
  const base = await serve(t, async (req, info) => {
    seen = info
    assert.ok(req instanceof Request)
    const text = await req.text()
    return new Response(
      `${req.method} ${new URL(req.url).pathname} ${req.headers.get('x-a')} ${text}`,
    )
  })
  const res = await fetch(`${base}/p?q=1`, {
    method: 'POST',
    body: 'payload',
    headers: { 'X-A': 'b' },
  })
  assert.equal(await res.text(), 'POST /p b payload')
  assert.equal(seen?.remoteAddress, '127.0.0.1')
  assert.equal(seen?.host?.framework, 'node')
})

test('a client that goes away aborts request.signal', async (t) => {
  let aborted!: () => void
  const sawAbort = new Promise<void>((r) => {
    aborted = r
  })
  let started!: () => void
  const handlerStarted = new Promise<void>((r) => {
    started = r
  })
  const base = await serve(t, (req) => {
    req.signal.addEventListener('abort', () => aborted())
    started()
    return new Promise<Response>(() => {})
  })
  const url = new URL(`${base}/slow`)
  const client = request({ host: '127.0.0.1', port: url.port, path: url.pathname })
  client.on('error', () => {})
  client.end()
  await handlerStarted
  client.destroy()
  await sawAbort
})

test('a handler that throws gets UE_INTERNAL and the server keeps serving', async (t) => {
  let calls = 0
  const base = await serve(t, async () => {
    calls++
    if (calls === 1) throw new Error('boom')
    return new Response('fine')
  })
  const failed = await fetch(`${base}/x`)
  assert.equal(failed.status, 500)
  assert.equal((await failed.json()).error.code, 'UE_INTERNAL')
  assert.equal(await (await fetch(`${base}/x`)).text(), 'fine')
})

test('X-Forwarded-For is read from the right, past trusted proxies only', () => {
  const proxies = parseTrustedProxies(['10.0.0.0/8', 'loopback'])
  assert.equal(clientAddress('203.0.113.9', '198.51.100.1', proxies), '203.0.113.9')
  assert.equal(clientAddress('10.1.2.3', '198.51.100.1', proxies), '198.51.100.1')
  assert.equal(clientAddress('127.0.0.1', '198.51.100.1, 10.0.0.2', proxies), '198.51.100.1')
  assert.equal(clientAddress('::ffff:10.1.2.3', '198.51.100.7', proxies), '198.51.100.7')
  // The client's own entries sit left of the proxy's and are never reached.
  assert.equal(clientAddress('10.1.2.3', '1.2.3.4, 198.51.100.1', proxies), '198.51.100.1')
  // A malformed entry stops at the proxy that passed it on.
  assert.equal(clientAddress('10.1.2.3', 'not-an-ip', proxies), '10.1.2.3')
  assert.equal(clientAddress('10.1.2.3', null, proxies), '10.1.2.3')
  assert.equal(clientAddress('10.1.2.3', '198.51.100.1', []), '10.1.2.3')
})
