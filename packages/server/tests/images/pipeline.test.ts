import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ServerConfigInput } from '../../src/config/schema.js'
import { createUeditorServer } from '../../src/server.js'
import { blob, GIF, png } from '../helpers/fixtures.js'
import { animatedGif, bmp, imageInfo, jpegWithExif, pixel, solid } from '../helpers/images.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'

interface Answer {
  state: string
  url: string
  type: string
  size: number
  code?: string
}

async function upload(srv: TestServer, action: string, field: string, bytes: Buffer, name: string) {
  const form = new FormData()
  form.append(field, blob(bytes), name)
  const res = await fetch(srv.action(action), { method: 'POST', body: form })
  return (await res.json()) as Answer
}

/** Uploads, then fetches what is served: the answer's size must be the served length. */
async function stored(srv: TestServer, action: string, field: string, bytes: Buffer, name: string) {
  const up = await upload(srv, action, field, bytes, name)
  assert.equal(up.state, 'SUCCESS', JSON.stringify(up))
  const res = await fetch(`${srv.url}${up.url}`)
  assert.equal(res.status, 200)
  const served = Buffer.from(await res.arrayBuffer())
  assert.equal(up.size, served.length)
  return { up, served, type: res.headers.get('content-type') }
}

async function withWatermark(t: { after(fn: () => Promise<void>): void }, mark: Buffer) {
  const dir = await mkdtemp(join(tmpdir(), 'ueditor-mark-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'mark.png')
  await writeFile(file, mark)
  return file
}

describe('the image pipeline', () => {
  test('a sideways photo is stored upright with its EXIF, camera and GPS data removed', async (t) => {
    const srv = await startTestServer(t)
    const photo = await jpegWithExif(40, 20)
    assert.ok(photo.includes('SecretCam'))
    const { served, type, up } = await stored(srv, 'image', 'upfile', photo, 'photo.jpg')
    assert.equal(type, 'image/jpeg')
    assert.equal(up.type, '.jpg')
    assert.deepEqual(await imageInfo(served), {
      format: 'jpeg',
      width: 20,
      height: 40,
      pages: 1,
      exif: false,
    })
    assert.ok(!served.includes('SecretCam'))
  })

  test('a sideways PNG (orientation in an eXIf chunk) is stored upright and without it', async (t) => {
    const srv = await startTestServer(t)
    const sideways = await solid(40, 20, 'red').png().withMetadata({ orientation: 6 }).toBuffer()
    assert.ok(sideways.includes('eXIf'))
    const { served, type } = await stored(srv, 'image', 'upfile', sideways, 'photo.png')
    assert.equal(type, 'image/png')
    assert.deepEqual(await imageInfo(served), {
      format: 'png',
      width: 20,
      height: 40,
      pages: 1,
      exif: false,
    })
  })

  test('with images.keepMetadata the EXIF data stays and the image is still upright', async (t) => {
    const srv = await startTestServer(t, { images: { keepMetadata: true } })
    const { served } = await stored(srv, 'image', 'upfile', await jpegWithExif(40, 20), 'p.jpg')
    const info = await imageInfo(served)
    assert.deepEqual([info.width, info.height, info.exif], [20, 40, true])
    assert.ok(served.includes('SecretCam'))
  })

  test('with imageCompressEnable the longest side is capped for images but not for attachments', async (t) => {
    const srv = await startTestServer(t, {
      editor: { imageCompressEnable: true, imageCompressBorder: 100 },
    })
    const wide = await solid(300, 150).png().toBuffer()
    const image = await stored(srv, 'image', 'upfile', wide, 'wide.png')
    assert.deepEqual(
      [(await imageInfo(image.served)).width, (await imageInfo(image.served)).height],
      [100, 50],
    )
    const small = await stored(srv, 'image', 'upfile', png(40, 30), 'small.png')
    assert.equal((await imageInfo(small.served)).width, 40)
    const attachment = await stored(srv, 'file', 'file', wide, 'wide.png')
    assert.equal((await imageInfo(attachment.served)).width, 300)
  })

  test('without imageCompressEnable images keep their size', async (t) => {
    const srv = await startTestServer(t, {
      editor: { imageCompressEnable: false, imageCompressBorder: 100 },
    })
    const { served } = await stored(
      srv,
      'image',
      'upfile',
      await solid(300, 150).png().toBuffer(),
      'w.png',
    )
    assert.equal((await imageInfo(served)).width, 300)
  })

  test('an animated GIF keeps every frame, also when it is resized', async (t) => {
    const srv = await startTestServer(t, { editor: { imageCompressBorder: 10 } })
    const gif = await animatedGif(20, 10, ['red', 'green', 'blue'])
    const { served, type } = await stored(srv, 'image', 'upfile', gif, 'anim.gif')
    assert.equal(type, 'image/gif')
    const info = await imageInfo(served)
    assert.deepEqual([info.format, info.pages, info.width], ['gif', 3, 10])
  })

  test('with images.format webp images are stored, served and listed as WebP', async (t) => {
    const srv = await startTestServer(t, {
      images: { format: 'webp' },
      editor: { imageManagerAllowFiles: ['.png', '.gif'] },
    })
    const still = await stored(srv, 'image', 'upfile', png(8, 6), 'a.png')
    assert.match(still.up.url, /\.webp$/)
    assert.equal(still.up.type, '.webp')
    assert.equal(still.type, 'image/webp')
    assert.deepEqual((await imageInfo(still.served)).format, 'webp')
    const anim = await stored(
      srv,
      'image',
      'upfile',
      await animatedGif(8, 8, ['red', 'blue']),
      'a.gif',
    )
    assert.deepEqual((await imageInfo(anim.served)).pages, 2)
    const list = await (await fetch(srv.action('listImage'))).json()
    assert.deepEqual(
      list.list.map((e: { url: string }) => e.url),
      [anim.up.url, still.up.url],
    )
  })

  test('a watermark is drawn at its position with its opacity and margin', async (t) => {
    const mark = await withWatermark(t, await solid(10, 10, 'red').png().toBuffer())
    const srv = await startTestServer(t, {
      images: { watermark: { file: mark, position: 'southeast', opacity: 1, margin: 5 } },
    })
    const { served } = await stored(
      srv,
      'image',
      'upfile',
      await solid(100, 80).png().toBuffer(),
      'w.png',
    )
    assert.deepEqual(await pixel(served, 90, 70), [255, 0, 0])
    assert.deepEqual(await pixel(served, 97, 77), [255, 255, 255])
    assert.deepEqual(await pixel(served, 10, 10), [255, 255, 255])
    const tiny = await stored(srv, 'image', 'upfile', png(12, 12), 'tiny.png')
    assert.deepEqual(await pixel(tiny.served, 6, 6), [128, 128, 128])
    const attachment = await stored(
      srv,
      'file',
      'file',
      await solid(100, 80).png().toBuffer(),
      'a.png',
    )
    assert.deepEqual(await pixel(attachment.served, 90, 70), [255, 255, 255])
  })

  test('a half-transparent watermark blends with the image', async (t) => {
    const mark = await withWatermark(t, await solid(10, 10, 'black').png().toBuffer())
    const srv = await startTestServer(t, {
      images: { watermark: { file: mark, position: 'northwest', opacity: 0.5, margin: 0 } },
    })
    const { served } = await stored(
      srv,
      'image',
      'upfile',
      await solid(50, 50).png().toBuffer(),
      'w.png',
    )
    const [r] = await pixel(served, 2, 2)
    assert.ok((r as number) > 100 && (r as number) < 155, String(r))
  })

  test('a watermark file that is missing or not an image stops the server at start', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'ueditor-mark-'))
    t.after(() => rm(dir, { recursive: true, force: true }))
    await writeFile(join(dir, 'fake.png'), 'not an image')
    for (const file of [join(dir, 'missing.png'), join(dir, 'fake.png')]) {
      const config: ServerConfigInput = {
        dataDir: dir,
        logLevel: 'silent',
        images: { watermark: { file } },
      }
      await assert.rejects(
        createUeditorServer({ env: {}, config }),
        (e: Error & { code?: string }) => {
          assert.equal(e.code, 'UE_CONFIG_INVALID')
          assert.match(e.message, /images\.watermark\.file/)
          return true
        },
      )
    }
  })

  test('a BMP, which cannot be re-encoded, is refused by default and even when listed', async (t) => {
    const payload = Buffer.concat([bmp(3, 2), Buffer.from('<html><script>alert(1)</script>')])
    const byDefault = await startTestServer(t)
    const listed = await startTestServer(t, { editor: { imageAllowFiles: ['.png', '.bmp'] } })
    for (const srv of [byDefault, listed]) {
      const up = await upload(srv, 'image', 'upfile', payload, 'a.bmp')
      assert.equal(up.code, 'UE_TYPE_NOT_ALLOWED')
      assert.deepEqual(await srv.storedFiles(), [])
    }
  })

  test('a GIF through the file action is re-encoded too', async (t) => {
    const srv = await startTestServer(t, { editor: { fileAllowFiles: ['.gif'] } })
    const payload = Buffer.from('<script>alert(1)</script>')
    const { served } = await stored(srv, 'file', 'file', Buffer.concat([GIF, payload]), 'a.gif')
    assert.ok(!served.includes(payload))
    assert.equal((await imageInfo(served)).format, 'gif')
  })

  test('with images.enabled false images are stored byte for byte', async (t) => {
    const srv = await startTestServer(t, { images: { enabled: false } })
    const photo = await jpegWithExif(40, 20)
    const { served } = await stored(srv, 'image', 'upfile', photo, 'p.jpg')
    assert.deepEqual(served, photo)
  })
})
