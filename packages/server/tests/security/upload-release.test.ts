import assert from 'node:assert/strict'
import { mkdir, readdir, writeFile } from 'node:fs/promises'
import { connect } from 'node:net'
import { join } from 'node:path'
import { eventually } from '../helpers/eventually.js'
import { png } from '../helpers/fixtures.js'
import { assertStillServes, firstJsonBody, rawExchange } from '../helpers/hostile.js'
import { multipartBody } from '../helpers/multipart.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'

const FIRST = png(300, 300, { noise: true })

function chunked(bytes: Buffer, size: number): Buffer[] {
  const out: Buffer[] = []
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size))
  return out
}

function request(srv: TestServer, body: Buffer, contentType: string, action = 'image'): string {
  const { pathname, search, host } = new URL(srv.action(action))
  return `POST ${pathname}${search} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n\r\n`
}

async function noSpoolLeft(srv: TestServer) {
  const temp = await eventually(() => srv.tempFiles(), {
    until: (files) => files.length === 0,
    what: 'no spool file left',
  })
  assert.deepEqual(temp, [], 'a spool file was left behind')
}

/** A plain upload from this client must still be admitted: no slot was left taken. */
async function stillAdmits(srv: TestServer) {
  const { body, contentType } = multipartBody([{ name: 'upfile', filename: 'a.png', value: png() }])
  const res = await fetch(srv.action('image'), {
    method: 'POST',
    body: new Uint8Array(body),
    headers: { 'Content-Type': contentType },
  })
  assert.equal(((await res.json()) as { state: string }).state, 'SUCCESS')
}

describe('S44: every upload path releases its slot, its spool and its connection', () => {
  test('a second file part of any size and chunking is answered, and 50 of them leave the limit open', async (t) => {
    // Two slots: a single leaked slot would lock this client out of the final upload.
    const srv = await startTestServer(t, {
      limits: { concurrentUploads: 2, uploadsPerMinute: 10_000 },
    })
    const sizes = [0, 1, 1_000, 30_000, 70_000, 300_000]
    const chunkings = [1 << 20, 65_536, 16_384, 7_919, 1_000]
    let sent = 0
    for (const size of sizes)
      for (const chunk of chunkings) {
        const { body, contentType } = multipartBody([
          { name: 'upfile', filename: 'a.png', contentType: 'image/png', value: FIRST },
          {
            name: 'x',
            filename: 'b.txt',
            contentType: 'text/plain',
            value: Buffer.alloc(size, 120),
          },
        ])
        const head = request(srv, body, contentType)
        const e = await rawExchange(srv, [Buffer.from(head), ...chunked(body, chunk)], {
          maxMs: 15_000,
        })
        assert.equal(firstJsonBody(e.text)?.code, 'UE_TOO_MANY_FILES', `${size}/${chunk}`)
        sent++
      }
    // Extra file parts in front of the accepted one, and a third file part, for the count.
    for (let i = 0; sent < 50; i++, sent++) {
      const { body, contentType } = multipartBody([
        { name: 'other', filename: 'o.txt', value: Buffer.alloc(40_000 + i, 121) },
        { name: 'upfile', filename: 'a.png', contentType: 'image/png', value: FIRST },
        { name: 'y', filename: 'c.txt', value: Buffer.alloc(50_000, 122) },
      ])
      const e = await rawExchange(srv, [Buffer.from(request(srv, body, contentType)), body], {
        maxMs: 15_000,
      })
      assert.equal(firstJsonBody(e.text)?.code, 'UE_TOO_MANY_FILES')
    }
    await noSpoolLeft(srv)
    assert.deepEqual(
      (await srv.storedFiles()).filter((f) => !f.startsWith('tmp')),
      [],
    )
    await stillAdmits(srv)
  })

  test('clients that hang up mid-body release their slots and spools', async (t) => {
    const srv = await startTestServer(t, {
      limits: { concurrentUploads: 3, uploadsPerMinute: 10_000 },
    })
    const { body, contentType } = multipartBody([
      { name: 'upfile', filename: 'a.png', contentType: 'image/png', value: FIRST },
    ])
    const head = request(srv, body, contentType)
    const { port } = new URL(srv.url)
    for (let i = 0; i < 10; i++) {
      const socket = connect(Number(port), '127.0.0.1')
      await new Promise<void>((resolve) => socket.once('connect', resolve))
      socket.write(head)
      socket.write(body.subarray(0, 100_000))
      // Long enough for the upload to be admitted and spooling.
      await eventually(() => srv.tempFiles(), {
        until: (files) => files.length > 0,
        what: 'a spool file opened',
      })
      socket.destroy()
    }
    await noSpoolLeft(srv)
    await stillAdmits(srv)
  })

  test('a body that keeps trickling below the minimum rate is ended with UE_BODY_TIMEOUT', async (t) => {
    const srv = await startTestServer(t, {
      // Idle never trips: a byte arrives every 200 ms. Only the rate rule can end it.
      http: { bodyIdleTimeoutMs: 5_000, minBodyRate: 1_000, bodyGraceMs: 1_000 },
    })
    const { body, contentType } = multipartBody([
      { name: 'upfile', filename: 'a.png', contentType: 'image/png', value: FIRST },
    ])
    const drip = Array.from({ length: 60 }, (_, i) => body.subarray(1_000 + i, 1_001 + i))
    const e = await rawExchange(
      srv,
      [Buffer.from(request(srv, body, contentType)), body.subarray(0, 1_000), ...drip],
      { gapMs: 200, maxMs: 15_000 },
    )
    assert.equal(firstJsonBody(e.text)?.code, 'UE_BODY_TIMEOUT')
    assert.equal(e.closedByServer, true)
    await noSpoolLeft(srv)
    await assertStillServes(srv)
  })

  test('a body that outlives http.bodyTimeoutMs is ended even at a good rate', async (t) => {
    const srv = await startTestServer(t, {
      http: { bodyTimeoutMs: 1_500, minBodyRate: 0 },
    })
    const { body, contentType } = multipartBody([
      { name: 'upfile', filename: 'a.png', contentType: 'image/png', value: FIRST },
    ])
    const e = await rawExchange(
      srv,
      [Buffer.from(request(srv, body, contentType)), ...chunked(body, 10_000).slice(0, 20)],
      { gapMs: 150, maxMs: 15_000 },
    )
    assert.equal(firstJsonBody(e.text)?.code, 'UE_BODY_TIMEOUT')
    await noSpoolLeft(srv)
  })

  test('one client address cannot hold more than limits.connectionsPerClient connections', async (t) => {
    const srv = await startTestServer(t, { limits: { connectionsPerClient: 5 } })
    const { port } = new URL(srv.url)
    const open = (localAddress: string) =>
      new Promise<{ closed: Promise<void> }>((resolve) => {
        const socket = connect({ port: Number(port), host: '127.0.0.1', localAddress })
        t.after(() => {
          socket.destroy()
        })
        const closed = new Promise<void>((r) => socket.once('close', () => r()))
        socket.once('connect', () => resolve({ closed }))
        socket.on('error', () => {})
      })
    const held = await Promise.all(Array.from({ length: 5 }, () => open('127.0.0.1')))
    const sixth = await open('127.0.0.1')
    await sixth.closed
    // Another address is still served, and the first five are still open.
    const e = await rawExchange(
      srv,
      ['GET /healthz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n'],
      {
        localAddress: '127.0.0.9',
      },
    )
    assert.match(e.text, /^HTTP\/1\.1 200 /)
    const stillOpen = await Promise.race([
      Promise.any(held.map((h) => h.closed)).then(() => false),
      new Promise<boolean>((r) => setTimeout(() => r(true), 200)),
    ])
    assert.equal(stillOpen, true)
  })

  test('a trusted proxy may hold more than limits.connectionsPerClient connections, since it carries many clients', async (t) => {
    const srv = await startTestServer(t, {
      limits: { connectionsPerClient: 2 },
      http: { trustProxy: ['127.0.0.1'] },
    })
    const { port } = new URL(srv.url)
    const open = (localAddress: string) =>
      new Promise<{ isClosed: () => boolean; closed: Promise<void> }>((resolve) => {
        const socket = connect({ port: Number(port), host: '127.0.0.1', localAddress })
        t.after(() => {
          socket.destroy()
        })
        let isClosed = false
        const closed = new Promise<void>((r) =>
          socket.once('close', () => {
            isClosed = true
            r()
          }),
        )
        socket.once('connect', () => resolve({ isClosed: () => isClosed, closed }))
        socket.on('error', () => {})
      })
    const proxy = []
    for (let i = 0; i < 4; i++) proxy.push(await open('127.0.0.1'))
    const other = []
    for (let i = 0; i < 3; i++) other.push(await open('127.0.0.9'))
    // An untrusted address past the limit is cut off; by then the proxy's four were let in.
    await other[2]?.closed
    assert.deepEqual(
      [...proxy, ...other].map((c) => c.isClosed()),
      [false, false, false, false, false, false, true],
    )
  })

  test('spool folders left by a killed process are removed at the next start, a live one is kept', async (t) => {
    const first = await startTestServer(t)
    const tempDir = first.ue.config.uploads.tempDir
    const dead = join(tempDir, 'req-999999999-0b5a3a2e-1f1e-4c1e-9c4b-1d2a3b4c5d6e')
    const legacy = join(tempDir, 'req-0b5a3a2e-1f1e-4c1e-9c4b-1d2a3b4c5d6f')
    const live = join(tempDir, `req-${process.ppid}-0b5a3a2e-1f1e-4c1e-9c4b-1d2a3b4c5d70`)
    for (const dir of [dead, legacy, live]) {
      await mkdir(dir, { recursive: true })
      await writeFile(join(dir, 'partial'), 'half an upload')
    }
    await first.close()
    const { startServer } = await import('../../src/standalone/serve.js')
    const second = await startServer({
      env: {},
      config: {
        logLevel: 'silent',
        dataDir: first.dataDir,
        http: { port: 0, host: '127.0.0.1' },
      },
    })
    t.after(() => second.close())
    assert.deepEqual(await readdir(tempDir), [live.slice(tempDir.length + 1)])
  })
})
