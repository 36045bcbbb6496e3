import assert from 'node:assert/strict'
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import sharp from 'sharp'
import { blob, png } from '../helpers/fixtures.js'
import { INSTALL_LIBREOFFICE as INSTALL, redEmf, redWmf, SOFFICE } from '../helpers/libreoffice.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'
import { contentImport, wordImageDialog } from '../helpers/word-flows.js'

interface Answer {
  state: string
  url: string
  type: string
  code?: string
}

async function upload(srv: TestServer, bytes: Buffer, name: string): Promise<Answer> {
  const form = new FormData()
  form.append('upfile', blob(bytes), name)
  const res = await fetch(srv.action('image'), { method: 'POST', body: form })
  return (await res.json()) as Answer
}

async function listed(srv: TestServer): Promise<number> {
  const res = await fetch(srv.action('listImage', '&start=0&size=100'))
  const body = (await res.json()) as { list?: unknown[] }
  return body.list?.length ?? 0
}

async function storedPng(srv: TestServer, up: Pick<Answer, 'state'> & Partial<Answer>) {
  assert.equal(up.state, 'SUCCESS', JSON.stringify(up))
  assert.equal(up.type, '.png')
  assert.match(up.url ?? '', /\.png$/)
  const res = await fetch(`${srv.url}${up.url}`)
  assert.equal(res.headers.get('content-type'), 'image/png')
  return Buffer.from(await res.arrayBuffer())
}

async function rgbaAt(png: Buffer, x: number, y: number) {
  const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  const at = (y * info.width + x) * 4
  return { rgba: [...data.subarray(at, at + 4)], width: info.width, height: info.height }
}

const red = (c: number[]) => (c[0] ?? 0) > 200 && (c[1] ?? 255) < 60 && (c[2] ?? 255) < 60

describe('Word pictures (EMF/WMF)', () => {
  // Defined only where LibreOffice is missing (so a run with it counts no skipped test): in CI
  // that is a failure that says what to install, elsewhere a skip with the same words.
  if (SOFFICE === null)
    test('without LibreOffice the tests say what to install', (t) => {
      if (process.env.CI === 'true') assert.fail(INSTALL)
      t.skip(INSTALL)
    })

  describe('with LibreOffice', { skip: SOFFICE === null ? INSTALL : false }, () => {
    test('an EMF, a hand-written WMF and an EMZ are stored as PNGs of their drawings at their own size', async (t) => {
      const dir = await mkdtemp(join(tmpdir(), 'ueditor-emf-'))
      t.after(() => rm(dir, { recursive: true, force: true }))
      const srv = await startTestServer(t)
      const config = (await (await fetch(srv.action('config'))).json()) as {
        imageAllowFiles: string[]
      }
      for (const ext of ['.emf', '.wmf', '.emz', '.wmz'])
        assert.ok(config.imageAllowFiles.includes(ext))

      const { emf, width, height } = await redEmf(dir)
      const fromEmf = await rgbaAt(await storedPng(srv, await upload(srv, emf, 'chart.emf')), 0, 0)
      assert.deepEqual([fromEmf.width, fromEmf.height], [width, height])
      const mid = await rgbaAt(
        await storedPng(srv, await upload(srv, emf, 'chart.emf')),
        width >> 1,
        height >> 1,
      )
      assert.ok(red(mid.rgba), `centre ${mid.rgba}`)

      const wmf = await rgbaAt(await storedPng(srv, await upload(srv, redWmf(), 'box.wmf')), 48, 24)
      assert.deepEqual([wmf.width, wmf.height], [96, 48])
      assert.ok(red(wmf.rgba), `centre ${wmf.rgba}`)

      const emz = await rgbaAt(
        await storedPng(srv, await upload(srv, gzipSync(emf), 'chart.emz')),
        width >> 1,
        height >> 1,
      )
      assert.deepEqual([emz.width, emz.height], [width, height])
      assert.ok(red(emz.rgba), `centre ${emz.rgba}`)
    })

    test('the stock Word flows deliver Word pictures that are stored as PNGs: the import’s blob.x-emf and blob.x-wmf, the paste dialog’s picked .emz; other bytes under those names are refused', async (t) => {
      const dir = await mkdtemp(join(tmpdir(), 'ueditor-emf-'))
      t.after(() => rm(dir, { recursive: true, force: true }))
      const srv = await startTestServer(t)
      const { emf, width, height } = await redEmf(dir)
      const imported = await contentImport(srv, { bytes: emf, contentType: 'image/x-emf' })
      const fromEmf = await rgbaAt(await storedPng(srv, imported), width >> 1, height >> 1)
      assert.deepEqual([fromEmf.width, fromEmf.height], [width, height])
      assert.ok(red(fromEmf.rgba), `centre ${fromEmf.rgba}`)
      const wmf = await contentImport(srv, { bytes: redWmf(), contentType: 'image/x-wmf' })
      assert.ok(red((await rgbaAt(await storedPng(srv, wmf), 48, 24)).rgba))
      const pasted = await wordImageDialog(srv, {
        name: 'clip_image001.emz',
        bytes: gzipSync(emf),
        type: 'application/octet-stream',
      })
      assert.ok(red((await rgbaAt(await storedPng(srv, pasted), width >> 1, height >> 1)).rgba))
      // The name is only a claim: other bytes named blob.x-emf are refused, nothing stored.
      const fake = await contentImport(srv, { bytes: png(4, 4), contentType: 'image/x-emf' })
      assert.equal(fake.code, 'UE_CONTENT_MISMATCH', JSON.stringify(fake))
      assert.equal(await listed(srv), 3)
    })

    test('huge declared bounds and broken metafiles are refused readably, before LibreOffice runs, with nothing stored', async (t) => {
      const dir = await mkdtemp(join(tmpdir(), 'ueditor-wmf-'))
      t.after(() => rm(dir, { recursive: true, force: true }))
      // A soffice that notes each run, so a refusal before conversion is seen as no run at all.
      const runs = join(dir, 'runs')
      const wrapper = join(dir, 'soffice')
      await writeFile(wrapper, `#!/bin/sh\necho run >> ${runs}\nexec ${SOFFICE} "$@"\n`)
      await chmod(wrapper, 0o755)
      const srv = await startTestServer(t, { images: { metafiles: { soffice: wrapper } } })

      const huge = await upload(srv, redWmf(32000, 32000, 1), 'huge.wmf')
      assert.equal(huge.code, 'UE_IMAGE_TOO_LARGE', JSON.stringify(huge))
      const bomb = await upload(
        srv,
        gzipSync(Buffer.concat([redWmf(), Buffer.alloc(80 * 1024 * 1024)])),
        'bomb.wmz',
      )
      assert.equal(bomb.code, 'UE_IMAGE_TOO_LARGE', JSON.stringify(bomb))
      const cut = redWmf().subarray(0, 30)
      const short = await upload(srv, cut, 'short.wmf')
      assert.equal(short.code, 'UE_CONTENT_MISMATCH', JSON.stringify(short))
      const notEmf = await upload(srv, Buffer.from('not a picture at all, only words'), 'fake.emf')
      assert.equal(notEmf.code, 'UE_CONTENT_MISMATCH')
      await assert.rejects(readFile(runs), 'LibreOffice ran for a picture refused by its header')

      // Records that draw nothing: LibreOffice runs, and the refusal is still readable.
      const junk = Buffer.concat([
        redWmf().subarray(0, 40),
        Buffer.from([5, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 0, 0, 0, 0, 0]),
      ])
      const broken = await upload(srv, junk, 'broken.wmf')
      assert.notEqual(broken.state, 'SUCCESS')
      assert.ok(
        ['UE_CONVERSION_FAILED', 'UE_CONTENT_MISMATCH'].includes(broken.code ?? ''),
        JSON.stringify(broken),
      )
      assert.ok(broken.state.length > 0)
      assert.equal(await listed(srv), 0)
    })
  })

  test('with no converter the Word extensions are not offered and an upload of one is refused readably', async (t) => {
    const srv = await startTestServer(t, {
      images: { metafiles: { soffice: '/nonexistent/soffice' } },
    })
    const config = (await (await fetch(srv.action('config'))).json()) as {
      imageAllowFiles: string[]
    }
    for (const ext of ['.emf', '.wmf', '.emz', '.wmz'])
      assert.ok(!config.imageAllowFiles.includes(ext))
    const up = await upload(srv, redWmf(), 'box.wmf')
    assert.equal(up.code, 'UE_CONVERTER_UNAVAILABLE', JSON.stringify(up))
    assert.match(up.state, /Word|EMF|图片/)
    assert.equal(await listed(srv), 0)
  })
})
