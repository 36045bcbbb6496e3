import assert from 'node:assert/strict'
import { blob } from '../helpers/fixtures.js'
import { assertStillServes, expectRefused, snapshot } from '../helpers/hostile.js'
import {
  gifDeclaring,
  imageInfo,
  jpegDeclaring,
  pngDeclaring,
  solid,
  webpDeclaring,
  zTxtChunk,
} from '../helpers/images.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'

function send(srv: TestServer, bytes: Buffer, name: string, action = 'image', field = 'upfile') {
  const form = new FormData()
  form.append(field, blob(bytes), name)
  return fetch(srv.action(action), { method: 'POST', body: form })
}

// UE_IMAGE_TOO_LARGE comes only from the header check: a decoder that had started on these
// files would have failed on their missing pixel data with UE_CONTENT_MISMATCH instead.
const BEFORE_DECODING = { codes: ['UE_IMAGE_TOO_LARGE'] }

describe('S11: pixel floods and decompression bombs', () => {
  test('images whose headers declare huge canvases are refused before decoding', async (t) => {
    const srv = await startTestServer(t, { editor: { fileAllowFiles: ['.png', '.webp'] } })
    const bombs: [string, Buffer][] = [
      ['png.png', pngDeclaring(30_000, 30_000)],
      ['lottapixel.jpg', await jpegDeclaring(64_250, 64_250)],
      ['canvas.gif', gifDeclaring(65_535, 65_535)],
      ['wide.webp', await webpDeclaring(16_383, 16_383)],
    ]
    for (const [name, bytes] of bombs) {
      assert.ok(bytes.length < 10_000, `${name} is small on the wire`)
      const action = name.endsWith('.webp') ? 'file' : 'image'
      const field = action === 'file' ? 'file' : 'upfile'
      await expectRefused(srv, () => send(srv, bytes, name, action, field), {
        ...BEFORE_DECODING,
        label: name,
      })
    }
  })

  test('an animation with more frames than images.maxFrames is refused', async (t) => {
    const srv = await startTestServer(t)
    const frames = gifDeclaring(1, 1, 10_000)
    await expectRefused(srv, () => send(srv, frames, 'frames.gif'), BEFORE_DECODING)
  })

  test('the pixel budget counts every frame of an animation', async (t) => {
    const srv = await startTestServer(t, { images: { maxPixels: 10_000, maxFrames: 1000 } })
    await expectRefused(srv, () => send(srv, gifDeclaring(50, 50, 5), 'anim.gif'), BEFORE_DECODING)
  })

  test('the budget is images.maxPixels: just under it passes, just over it is refused', async (t) => {
    const srv = await startTestServer(t, { images: { maxPixels: 10_000 } })
    const under = await send(srv, await solid(100, 100).png().toBuffer(), 'ok.png')
    assert.equal((await under.json()).state, 'SUCCESS')
    await expectRefused(srv, () => send(srv, pngDeclaring(101, 100), 'over.png'), BEFORE_DECODING)
    await assertStillServes(srv)
  })

  test('a PNG with a huge compressed text chunk is stored without it', async (t) => {
    const srv = await startTestServer(t)
    const bomb = pngDeclaring(4, 4, [zTxtChunk(64 * 1024 * 1024)])
    assert.ok(bomb.length < 200_000)
    const before = await snapshot(srv)
    const res = await send(srv, bomb, 'text.png')
    const up = (await res.json()) as { state: string; url: string; size: number; code?: string }
    if (up.state === 'SUCCESS') {
      assert.ok(up.size < 1_000, String(up.size))
      const served = Buffer.from(await (await fetch(`${srv.url}${up.url}`)).arrayBuffer())
      assert.deepEqual([(await imageInfo(served)).width, served.includes('zTXt')], [4, false])
    } else {
      assert.equal(up.code, 'UE_CONTENT_MISMATCH')
      assert.deepEqual(await snapshot(srv), before)
    }
    await assertStillServes(srv)
  })
})
