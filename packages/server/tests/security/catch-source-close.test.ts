import assert from 'node:assert/strict'
import { createServer, type Socket } from 'node:net'
import { test } from 'node:test'
import sharp from 'sharp'
import { catchUrls } from '../helpers/catch.js'
import { startTestServer } from '../helpers/start-server.js'

/**
 * An image server that answers with the whole image and closes its side at once
 * (`Connection: close`, then FIN), as many do. Before the fix, a FIN that reached undici's
 * HTTP/1 parser while a slower spool write had paused it threw an uncatchable assertion and
 * ended the process (docs/security.md, row S64).
 */
async function closingOrigin(
  t: { after(fn: () => Promise<void>): void },
  image: Buffer,
): Promise<string> {
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    socket.once('data', () => {
      socket.write(
        'HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n' +
          `Content-Length: ${image.length}\r\nConnection: close\r\n\r\n`,
      )
      socket.end(image)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  const address = server.address()
  assert.ok(address && typeof address === 'object')
  return `127.0.0.1:${address.port}`
}

test('sources that send a large image and close their connection at once are all captured, and the server keeps running', async (t) => {
  // An uncompressed PNG of about 1 MB: far more than undici buffers before it pauses.
  const image = await sharp({
    create: { width: 600, height: 600, channels: 3, background: '#3a7' },
  })
    .png({ compressionLevel: 0 })
    .toBuffer()
  const host = await closingOrigin(t, image)
  const srv = await startTestServer(t, {
    editor: { catcherLocalDomain: [], catcherMaxSize: 4_000_000 },
    catcher: { allowHosts: [host], maxSources: 20 },
  })
  let captured = 0
  for (let round = 0; round < 8; round++) {
    const sources = Array.from({ length: 10 }, (_, i) => `http://${host}/r${round}-${i}.png`)
    const answer = await catchUrls(srv, sources)
    captured += answer.list.filter((e) => e.state === 'SUCCESS').length
  }
  assert.equal(captured, 80)
  assert.equal((await fetch(`${srv.url}/healthz`)).status, 200)
})
