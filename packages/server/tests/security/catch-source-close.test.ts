import assert from 'node:assert/strict'
import sharp from 'sharp'
import { catchUrls } from '../helpers/catch.js'
import { startClosingOrigin } from '../helpers/origin-server.js'
import { startTestServer } from '../helpers/start-server.js'
import { test } from '../helpers/test.js'

test('sources that send a large image and close their connection at once are all captured, and the server keeps running', async (t) => {
  // An uncompressed PNG of about 1 MB: far more than undici buffers before it pauses.
  const image = await sharp({
    create: { width: 600, height: 600, channels: 3, background: '#3a7' },
  })
    .png({ compressionLevel: 0 })
    .toBuffer()
  // The origin closes its side right after the image; before the fix, a FIN that reached
  // undici's HTTP/1 parser while a slower spool write had paused it threw an uncatchable
  // assertion and ended the process (docs/security.md, row S64).
  const host = await startClosingOrigin(t, 'image/png', image)
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
