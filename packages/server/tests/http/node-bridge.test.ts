import assert from 'node:assert/strict'
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import { clientAddress, parseTrustedProxies } from '../../src/http/client-address.js'
import { toNodeHandler } from '../../src/http/node.js'
import type { UeError } from '../../src/shared/errors.js'
import { BodyWatch, pipeBody } from '../../src/shared/request-body.js'
import type { ConnectionInfo } from '../../src/shared/request-info.js'
import type { FetchHandler } from '../../src/shared/types.js'
import { eventually } from '../helpers/eventually.js'
import { type TestContext, test } from '../helpers/test.js'

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

test('a handler of the host app gets a real Request, which it can copy and pass to fetch', async (t) => {
  // The upstream echoes what reached it.
  const upstream = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.end(`${req.method} ${req.url} ${req.headers['x-a']} ${Buffer.concat(chunks)}`)
    })
  })
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r))
  t.after(() => new Promise((r) => upstream.close(r)))
  // A forwarding handler: the request URL names the origin the client asked for (its Host).
  const base = new URL(await serve(t, (req) => fetch(new Request(req))))
  const answer = await new Promise<string>((resolve, reject) => {
    const client = request(
      {
        host: '127.0.0.1',
        port: base.port,
        path: '/p?q=1',
        method: 'POST',
        headers: { host: `127.0.0.1:${(upstream.address() as AddressInfo).port}`, 'x-a': 'b' },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => resolve(Buffer.concat(chunks).toString()))
      },
    )
    client.on('error', reject)
    client.end('payload')
  })
  assert.equal(answer, 'POST /p?q=1 b payload')
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

test('a signal first read after the client went away is already aborted', async (t) => {
  let clientGone!: () => void
  const gone = new Promise<void>((r) => {
    clientGone = r
  })
  let started!: () => void
  const handlerStarted = new Promise<void>((r) => {
    started = r
  })
  let seen!: (aborted: boolean) => void
  const aborted = new Promise<boolean>((r) => {
    seen = r
  })
  const node = toNodeHandler(async (req) => {
    started()
    await gone
    seen(req.signal.aborted)
    return new Response('late')
  })
  const server = createServer((req, res) => {
    node(req, res)
    // Registered after the bridge's own listener, so the bridge has seen the close first.
    res.once('close', () => clientGone())
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.after(async () => {
    server.closeAllConnections()
    await new Promise((r) => server.close(r))
  })
  const client = request({
    host: '127.0.0.1',
    port: (server.address() as AddressInfo).port,
    path: '/slow',
  })
  client.on('error', () => {})
  client.end()
  await handlerStarted
  client.destroy()
  assert.equal(await aborted, true)
})

/** POSTs `size` bytes and answers with what the handler reported as its text. */
async function postBytes(base: string, size: number): Promise<{ status: number; text: string }> {
  const res = await fetch(`${base}/in`, { method: 'POST', body: Buffer.alloc(size, 1) })
  return { status: res.status, text: await res.text() }
}

/** A destination that counts what reaches it. */
function counter(): { sink: Writable; bytes: () => number } {
  let bytes = 0
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      bytes += chunk.length
      done()
    },
  })
  return { sink, bytes: () => bytes }
}

const TIMEOUTS = {
  bodyIdleTimeoutMs: 10_000,
  bodyTimeoutMs: 30_000,
  minBodyRate: 0,
  bodyGraceMs: 10_000,
}

test('the Node edge hands its body stream to a Node reader, under the same byte cap', async (t) => {
  const outcomes: string[] = []
  const base = await serve(t, async (req) => {
    const { sink, bytes } = counter()
    const watch = new BodyWatch(TIMEOUTS, req.signal)
    try {
      await pipeBody(req, sink, { maxBytes: 64 * 1024, watch })
      // The stream was taken: the web body of the same request can only fail, loudly.
      const again = await req.arrayBuffer().then(
        () => 'read',
        (e: unknown) => (e as UeError).code,
      )
      outcomes.push(`${bytes()} ${again}`)
    } catch (e) {
      outcomes.push(`${(e as UeError).code} ${bytes() <= 64 * 1024}`)
    } finally {
      watch.stop()
    }
    return new Response('done')
  })
  await postBytes(base, 50_000)
  // The refusal closes the connection mid-body: the client may see a reset instead of an answer.
  await postBytes(base, 1024 * 1024).catch(() => undefined)
  await eventually(async () => outcomes.length, { until: (n) => n === 2, what: 'both outcomes' })
  assert.deepEqual(outcomes, ['50000 UE_BODY_CONSUMED', 'UE_BODY_TOO_LARGE true'])
})

test('a body whose web stream was read first is not handed out again as the Node stream', async (t) => {
  const base = await serve(t, async (req) => {
    const first = await req.text()
    const watch = new BodyWatch(TIMEOUTS, req.signal)
    try {
      await pipeBody(req, counter().sink, { maxBytes: 1024, watch })
      return new Response(`piped after ${first.length}`)
    } catch (e) {
      return new Response(`${(e as UeError).code} after ${first.length}`)
    } finally {
      watch.stop()
    }
  })
  assert.deepEqual(await postBytes(base, 100), {
    status: 200,
    text: 'UE_BODY_CONSUMED after 100',
  })
})
