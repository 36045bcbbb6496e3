import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { stat, writeFile } from 'node:fs/promises'
import { connect } from 'node:net'
import { join } from 'node:path'
import { eventually } from '../helpers/eventually.js'
import { PDF } from '../helpers/fixtures.js'
import { multipartBody } from '../helpers/multipart.js'
import { startTestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'

describe('the upload spool', () => {
  test('a stored upload is the spooled file itself: no spool file stays and no second copy exists', async (t) => {
    const srv = await startTestServer(t)
    const bytes = Buffer.concat([PDF, Buffer.alloc(200_000, 0x20)])
    const form = new FormData()
    form.append('file', new Blob([new Uint8Array(bytes)]), 'a.pdf')
    const res = await fetch(srv.action('file'), { method: 'POST', body: form })
    const answer = (await res.json()) as { state: string; url: string }
    assert.equal(answer.state, 'SUCCESS')
    assert.deepEqual(await srv.tempFiles(), [])
    const stored = await srv.storedFiles()
    assert.equal(stored.length, 1)
    const { storage } = srv.ue.config
    assert.ok(storage.driver === 'local')
    const facts = await stat(join(storage.root, stored[0] as string))
    // One name left for the bytes: the spool's own name was removed, nothing else links to them.
    assert.equal(facts.nlink, 1)
    assert.equal(facts.size, bytes.length)
    const served = Buffer.from(await (await fetch(new URL(answer.url, srv.url))).arrayBuffer())
    assert.deepEqual(served, bytes)
  })

  test('a large upload that arrives in many small pieces is stored byte for byte', async (t) => {
    const srv = await startTestServer(t)
    // Random bytes: pieces written out of order or twice would not compare equal.
    const bytes = Buffer.concat([PDF, randomBytes(3 * 1024 * 1024)])
    const { body, contentType } = multipartBody([
      { name: 'file', filename: 'big.pdf', value: bytes, contentType: 'application/pdf' },
    ])
    const PIECE = 7919
    let sent = 0
    const pieces = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= body.length) return controller.close()
        controller.enqueue(new Uint8Array(body.subarray(sent, sent + PIECE)))
        sent += PIECE
      },
    })
    const res = await fetch(srv.action('file'), {
      method: 'POST',
      headers: { 'Content-Type': contentType },
      body: pieces,
      duplex: 'half',
    } as RequestInit)
    const answer = (await res.json()) as { state: string; url: string }
    assert.equal(answer.state, 'SUCCESS')
    const served = Buffer.from(await (await fetch(new URL(answer.url, srv.url))).arrayBuffer())
    assert.ok(served.equals(bytes), 'the stored file differs from the upload')
    assert.deepEqual(await srv.tempFiles(), [])
  })

  test('a file whose first bytes contradict its extension is refused before the rest of its body is sent', async (t) => {
    const srv = await startTestServer(t, { editor: { imageMaxSize: 50 * 1024 * 1024 } })
    const boundary = 'spoolboundary'
    const partHead = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="upfile"; filename="a.png"\r\n` +
        'Content-Type: image/png\r\n\r\n',
    )
    // A PDF under a PNG name, announced as 40 MB; only the first 256 KB are ever sent.
    const firstBytes = Buffer.concat([PDF, Buffer.alloc(256 * 1024 - PDF.length, 0x20)])
    const declared = partHead.length + 40 * 1024 * 1024
    const { pathname, search, host } = new URL(srv.action('image'))
    const socket = connect(Number(new URL(srv.url).port), '127.0.0.1')
    t.after(() => socket.destroy())
    let received = ''
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1')
    })
    socket.on('error', () => {})
    socket.write(
      `POST ${pathname}${search} HTTP/1.1\r\nHost: ${host}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${declared}\r\n\r\n`,
    )
    socket.write(partHead)
    socket.write(firstBytes)
    const answer = await eventually(async () => received, {
      until: (text) => text.includes('\r\n\r\n{'),
      timeoutMs: 10_000,
      what: 'the answer to the upload',
    })
    assert.match(answer, /"code":"UE_CONTENT_MISMATCH"/)
    assert.deepEqual(
      await eventually(() => srv.tempFiles(), {
        until: (files) => files.length === 0,
        what: 'no temp files left',
      }),
      [],
    )
    assert.deepEqual(await srv.storedFiles(), [])
  })

  test('spool files left by a killed process are removed at the next start, a live one is kept', async (t) => {
    const first = await startTestServer(t)
    const tempDir = first.ue.config.uploads.tempDir
    const dead = `req-999999999-0b5a3a2e-1f1e-4c1e-9c4b-1d2a3b4c5d6e`
    const live = `req-${process.ppid}-0b5a3a2e-1f1e-4c1e-9c4b-1d2a3b4c5d70`
    for (const name of [dead, live]) await writeFile(join(tempDir, name), 'half an upload')
    await first.close()
    const { startServer } = await import('../../src/standalone/serve.js')
    const second = await startServer({
      env: {},
      config: { logLevel: 'silent', dataDir: first.dataDir, http: { port: 0, host: '127.0.0.1' } },
    })
    t.after(() => second.close())
    await assert.rejects(stat(join(tempDir, dead)), { code: 'ENOENT' })
    assert.equal((await stat(join(tempDir, live))).isFile(), true)
  })
})
