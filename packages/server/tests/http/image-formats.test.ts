import assert from 'node:assert/strict'
import sharp from 'sharp'
import { EDITOR_DEFAULTS } from '../../src/config/editor-defaults.js'
import { catchUrls } from '../helpers/catch.js'
import { blob } from '../helpers/fixtures.js'
import { imageInfo } from '../helpers/images.js'
import { originImages, startOriginServer } from '../helpers/origin-server.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'

async function uploadImage(srv: TestServer, bytes: Buffer, name: string) {
  const form = new FormData()
  form.append('upfile', blob(bytes), name)
  const res = await fetch(srv.action('image'), { method: 'POST', body: form })
  return (await res.json()) as { state: string; url: string; type: string; code?: string }
}

const picture = () => sharp({ create: { width: 24, height: 16, channels: 3, background: '#3a7' } })

describe('WebP and AVIF, which the image pipeline checks and re-encodes', () => {
  test('are in the default image, catcher and manager allow-lists', () => {
    for (const key of ['imageAllowFiles', 'catcherAllowFiles', 'imageManagerAllowFiles'] as const) {
      assert.ok(EDITOR_DEFAULTS[key].includes('.webp'), key)
      assert.ok(EDITOR_DEFAULTS[key].includes('.avif'), key)
    }
  })

  test('a pasted WebP and AVIF upload with the default config, re-encoded in their own format', async (t) => {
    const srv = await startTestServer(t)
    const config = await (await fetch(srv.action('config'))).json()
    assert.ok(config.imageAllowFiles.includes('.webp'))
    for (const [name, bytes, format] of [
      ['paste.webp', await picture().webp().toBuffer(), 'webp'],
      ['photo.avif', await picture().avif().toBuffer(), 'heif'],
    ] as const) {
      const up = await uploadImage(srv, bytes, name)
      assert.equal(up.state, 'SUCCESS', `${name}: ${up.code}`)
      const served = Buffer.from(await (await fetch(new URL(up.url, srv.url))).arrayBuffer())
      const info = await imageInfo(served)
      assert.equal(info.format, format)
      assert.deepEqual([info.width, info.height], [24, 16])
    }
    const list = await (await fetch(srv.action('listImage'))).json()
    assert.equal(list.total, 2)
  })

  test('a WebP that is really something else is still refused', async (t) => {
    const srv = await startTestServer(t)
    const up = await uploadImage(srv, await picture().png().toBuffer(), 'fake.webp')
    assert.equal(up.code, 'UE_CONTENT_MISMATCH')
    assert.deepEqual(await srv.storedFiles(), [])
  })

  test('a remote WebP is captured with the default catcherAllowFiles', async (t) => {
    const origin = await startOriginServer(t, await originImages())
    const srv = await startTestServer(t, {
      editor: { catcherLocalDomain: ['img.local.example'] },
      catcher: { allowHosts: [origin.host] },
    })
    const answer = await catchUrls(srv, [origin.url('/pic.webp')])
    assert.equal(answer.list[0]?.state, 'SUCCESS')
    assert.match(answer.list[0]?.url ?? '', /\.webp$/)
  })
})

describe('bytes appended to an image never reach storage', () => {
  test('every accepted image format is re-encoded, dropping an appended page and ZIP', async (t) => {
    // Word pictures (EMF, WMF) have a test of their own (images/metafiles.test.ts).
    const srv = await startTestServer(t, { images: { metafiles: { enabled: false } } })
    const payload = Buffer.concat([
      Buffer.from('<html><script>alert(document.cookie)</script></html>'),
      Buffer.from('PK\x03\x04\x14\x00\x00\x00\x08\x00', 'latin1'),
    ])
    const formats = [
      ['a.png', await picture().png().toBuffer()],
      ['a.jpg', await picture().jpeg().toBuffer()],
      ['a.jpeg', await picture().jpeg().toBuffer()],
      ['a.gif', await picture().gif().toBuffer()],
      ['a.webp', await picture().webp().toBuffer()],
      ['a.avif', await picture().avif().toBuffer()],
    ] as const
    const config = await (await fetch(srv.action('config'))).json()
    // Every image format the server accepts by default is covered here.
    assert.deepEqual(
      [...config.imageAllowFiles].sort(),
      formats.map(([name]) => name.slice(1)).sort(),
    )
    for (const [name, bytes] of formats) {
      const up = await uploadImage(srv, Buffer.concat([bytes, payload]), name)
      assert.equal(up.state, 'SUCCESS', `${name}: ${up.code}`)
      const served = Buffer.from(await (await fetch(new URL(up.url, srv.url))).arrayBuffer())
      assert.ok(!served.includes(payload.subarray(0, 20)), `${name} kept the appended page`)
      assert.ok(!served.includes(Buffer.from('PK\x03\x04', 'latin1')), `${name} kept the ZIP`)
    }
  })
})
