import assert from 'node:assert/strict'
import sharp from 'sharp'
import { EDITOR_DEFAULTS, SERVER_ONLY_EDITOR_KEYS } from '../../src/config/editor-defaults.js'
import { openMetadataStore } from '../../src/db/open.js'
import type { StorageKey } from '../../src/shared/types.js'
import { blob, GIF, MP3, MP4, PDF, png } from '../helpers/fixtures.js'
import { multipartBody, webUploaderFields } from '../helpers/multipart.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'

interface UploadAnswer {
  state: string
  url: string
  title: string
  original: string
  type: string
  size: number
}

async function assertServesBack(srv: TestServer, url: string, bytes: Buffer, type: string) {
  const res = await fetch(`${srv.url}${url}?noCache=${Date.now()}`)
  assert.equal(res.status, 200)
  assert.equal(res.headers.get('content-type'), type)
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff')
  assert.deepEqual(Buffer.from(await res.arrayBuffer()), bytes)
}

/** Stored images are re-encoded: the served bytes are a valid image of the uploaded size. */
async function assertServesImage(srv: TestServer, up: UploadAnswer, uploaded: Buffer) {
  const res = await fetch(`${srv.url}${up.url}?noCache=${Date.now()}`)
  assert.equal(res.status, 200)
  const expected = await sharp(uploaded).metadata()
  assert.equal(res.headers.get('content-type'), `image/${expected.format}`)
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff')
  const served = Buffer.from(await res.arrayBuffer())
  assert.equal(up.size, served.length)
  const meta = await sharp(served).metadata()
  assert.deepEqual(
    [meta.format, meta.width, meta.height],
    [expected.format, expected.width, expected.height],
  )
}

describe('the editor protocol as UEditor Plus speaks it', () => {
  test('config over XHR answers every key with its default, as strict JSON', async (t) => {
    // The defaults as documented; LibreOffice, where installed, adds the Word picture types.
    const srv = await startTestServer(t, { images: { metafiles: { enabled: false } } })
    // The literal `&&` and `noCache` are what UE.ajax sends (docs/protocol.md, config).
    const res = await fetch(`${srv.url}/ueditor?action=config&&noCache=1713500000000`)
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8')
    const text = await res.text()
    const config = JSON.parse(text) as Record<string, unknown>
    const expected: Record<string, unknown> = { ...EDITOR_DEFAULTS }
    for (const key of SERVER_ONLY_EDITOR_KEYS) delete expected[key]
    // The formula renderer is on by default: its image URL and the dialog's offline mode are
    // sent (docs/formula.md).
    expected.formulaConfig = { imageUrlTemplate: '/formula.svg?{}', editorMode: 'plain' }
    // Resumable uploads are on by default: their route is named for the page (docs/uploads.md).
    expected.uploadTusUrl = '/tus'
    assert.deepEqual(config, expected)
    for (const [key, value] of Object.entries(config)) {
      if (key.endsWith('UrlPrefix')) assert.equal(typeof value, 'string', key)
      if (key.endsWith('AllowFiles'))
        for (const ext of value as string[]) assert.match(ext, /^\.[a-z0-9]+$/, key)
    }
    for (const key of ['audioActionName', 'audioFieldName', 'audioMaxSize', 'audioAllowFiles'])
      assert.ok(key in config, key)
    assert.ok(Array.isArray(config.catcherLocalDomain))
    assert.deepEqual(config.toolbarShows, {})
    assert.deepEqual(config.shortcutMenuShows, {})
    assert.match((config.formulaConfig as { imageUrlTemplate: string }).imageUrlTemplate, /\{\}/)
    assert.doesNotMatch(text, /PathFormat|\/tmp\/|ueditor-test-/)
  })

  test('config over JSONP wraps the same object in the named callback', async (t) => {
    // With catch answered over JSONP too; otherwise the answer turns capture off (config-answer).
    const srv = await startTestServer(t, { http: { jsonpActions: ['config', 'list', 'catch'] } })
    const res = await fetch(`${srv.url}/ueditor?action=config&callback=bd__editor__k3j9x2`)
    assert.equal(res.headers.get('content-type'), 'application/javascript; charset=utf-8')
    const text = await res.text()
    const match = /^\/\*\*\/bd__editor__k3j9x2\((.*)\);$/s.exec(text)
    assert.ok(match, text.slice(0, 80))
    const plain = await (await fetch(`${srv.url}/ueditor?action=config`)).json()
    assert.deepEqual(JSON.parse(match[1] as string), plain)
  })

  test('a simple-upload multipart image is stored, answered and served back', async (t) => {
    const srv = await startTestServer(t)
    const bytes = png(4, 3)
    const form = new FormData()
    form.append('upfile', blob(bytes, 'image/png'), '截图 2026.png')
    const res = await fetch(srv.action('image'), {
      method: 'POST',
      body: form,
      headers: { Accept: 'application/json, text/plain, */*' },
    })
    assert.equal(res.status, 200)
    const up = (await res.json()) as UploadAnswer
    assert.equal(up.state, 'SUCCESS')
    assert.match(up.url, /^\/uploads\/image\/\d{8}\/\d+[0-9a-z]{24}\.png$/)
    assert.equal(up.title, up.url.split('/').pop())
    assert.equal(up.original, '截图 2026.png')
    assert.equal(up.type, '.png')
    await assertServesImage(srv, up, bytes)
  })

  test('a WebUploader image upload with its extra fields and encode=utf-8 is stored', async (t) => {
    const srv = await startTestServer(t)
    const bytes = png(2, 2)
    const { body, contentType } = multipartBody([
      // The client's `size` field lies; the server must not care.
      ...webUploaderFields('照片.png', 1, 'image/png'),
      { name: 'upfile', filename: '照片.png', contentType: 'image/png', value: bytes },
    ])
    const res = await fetch(srv.action('image', '&encode=utf-8'), {
      method: 'POST',
      body,
      headers: { 'Content-Type': contentType },
    })
    const up = (await res.json()) as UploadAnswer
    assert.equal(up.state, 'SUCCESS')
    assert.equal(up.original, '照片.png')
    await assertServesImage(srv, up, bytes)
  })

  test('a Word import image in the hard-coded upfile field with type=ajax is stored', async (t) => {
    const srv = await startTestServer(t, { editor: { imageFieldName: 'file' } })
    const { body, contentType } = multipartBody([
      { name: 'upfile', filename: 'blob.gif', contentType: 'image/gif', value: GIF },
      { name: 'type', value: 'ajax' },
    ])
    const res = await fetch(srv.action('image'), {
      method: 'POST',
      body,
      headers: { 'Content-Type': contentType, 'X-Requested-With': 'XMLHttpRequest' },
    })
    const up = (await res.json()) as UploadAnswer
    assert.equal(up.state, 'SUCCESS')
    assert.equal(up.type, '.gif')
    await assertServesImage(srv, up, GIF)
  })

  test('a scrawl arrives as url-encoded base64 with a trailing & and is stored as PNG', async (t) => {
    const srv = await startTestServer(t)
    const bytes = png(8, 8)
    const res = await fetch(srv.action('scrawl', '&'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `upfile=${encodeURIComponent(bytes.toString('base64'))}`,
    })
    const up = (await res.json()) as UploadAnswer
    assert.equal(up.state, 'SUCCESS')
    assert.match(up.url, /^\/uploads\/scrawl\/.+\.png$/)
    assert.equal(up.type, '.png')
    await assertServesImage(srv, up, bytes)
  })

  test('a scrawl with a data: prefix is tolerated', async (t) => {
    const srv = await startTestServer(t)
    const bytes = png(2, 2)
    const payload = `data:image/png;base64,${bytes.toString('base64')}`
    const res = await fetch(srv.action('scrawl'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `upfile=${encodeURIComponent(payload)}`,
    })
    assert.equal(((await res.json()) as UploadAnswer).state, 'SUCCESS')
  })

  test('the snap action stores an image like the image action does', async (t) => {
    const srv = await startTestServer(t)
    const form = new FormData()
    form.append('upfile', blob(png(), 'image/png'), 'snap.png')
    const up = (await (
      await fetch(srv.action('snap'), { method: 'POST', body: form })
    ).json()) as UploadAnswer
    assert.equal(up.state, 'SUCCESS')
    assert.match(up.url, /^\/uploads\/snapscreen\//)
  })

  for (const [action, field, name, bytes, type] of [
    ['video', 'file', 'clip.mp4', MP4, 'video/mp4'],
    ['audio', 'file', 'song.mp3', MP3, 'audio/mpeg'],
    ['file', 'file', '报告.pdf', PDF, 'application/pdf'],
  ] as const) {
    test(`a WebUploader ${action} upload is stored and served back with its sniffed type`, async (t) => {
      const srv = await startTestServer(t)
      const { body, contentType } = multipartBody([
        ...webUploaderFields(name, bytes.length, type),
        { name: field, filename: name, contentType: type, value: bytes },
      ])
      const res = await fetch(srv.action(action, '&encode=utf-8'), {
        method: 'POST',
        body,
        headers: { 'Content-Type': contentType, X_Requested_With: 'XMLHttpRequest' },
      })
      const up = (await res.json()) as UploadAnswer
      assert.equal(up.state, 'SUCCESS', JSON.stringify(up))
      assert.equal(up.original, name)
      assert.equal(up.type, name.slice(name.lastIndexOf('.')))
      await assertServesBack(srv, up.url, bytes, type)
    })
  }

  test('listImage with start, size and noCache pages newest first with numeric start and total', async (t) => {
    const srv = await startTestServer(t)
    const urls: string[] = []
    for (let i = 0; i < 5; i++) {
      const form = new FormData()
      form.append('upfile', blob(png(1, i + 1), 'image/png'), `p${i}.png`)
      const up = (await (
        await fetch(srv.action('image'), { method: 'POST', body: form })
      ).json()) as UploadAnswer
      urls.push(up.url)
    }
    const page1 = await (
      await fetch(srv.action('listImage', `&start=0&size=2&noCache=${Date.now()}`))
    ).json()
    assert.equal(page1.state, 'SUCCESS')
    assert.equal(page1.start, 0)
    assert.equal(page1.total, 5)
    assert.deepEqual(
      page1.list.map((e: { url: string }) => e.url),
      [urls[4], urls[3]],
    )
    assert.equal(typeof page1.list[0].mtime, 'number')
    assert.equal(page1.list[0].original, 'p4.png')
    // The client computes the next offset as start + list.length (docs/protocol.md, listings).
    const page3 = await (await fetch(srv.action('listImage', '&start=4&size=2'))).json()
    assert.deepEqual(
      page3.list.map((e: { url: string }) => e.url),
      [urls[0]],
    )
    assert.equal(page3.start, 4)
  })

  test('the first image page read again shows an upload made meanwhile and a file another node indexed', async (t) => {
    const srv = await startTestServer(t)
    const upload = async (name: string) => {
      const form = new FormData()
      form.append('upfile', blob(png(2, 2), 'image/png'), name)
      return (
        (await (
          await fetch(srv.action('image'), { method: 'POST', body: form })
        ).json()) as UploadAnswer
      ).url
    }
    const firstPage = async () => {
      const page = await (await fetch(srv.action('listImage', '&start=0&size=2'))).json()
      return { urls: page.list.map((e: { url: string }) => e.url), total: page.total }
    }
    const older = await upload('older.png')
    assert.deepEqual(await firstPage(), { urls: [older], total: 1 })
    assert.deepEqual(await firstPage(), { urls: [older], total: 1 })
    const newer = await upload('newer.png')
    assert.deepEqual(await firstPage(), { urls: [newer, older], total: 2 })

    // Another node sharing the index adds a row; this node's next read must show it.
    const config = srv.ue.config.index
    assert.equal(config.driver, 'sqlite')
    const otherNode = await openMetadataStore(config)
    const key = `image/20990101/othernode0123456789abcdef.png` as StorageKey
    await otherNode.files.add({
      key,
      category: 'image',
      originalName: 'other.png',
      ext: '.png',
      size: 10,
      mime: 'image/png',
      sha256: '',
      createdAt: Date.now() + 60_000,
    })
    await otherNode.close()
    assert.deepEqual(await firstPage(), { urls: [`/uploads/${key}`, newer], total: 3 })
  })

  test('listFile lists attachments with their original names and not images', async (t) => {
    const srv = await startTestServer(t)
    const image = new FormData()
    image.append('upfile', blob(png(), 'image/png'), 'a.png')
    await fetch(srv.action('image'), { method: 'POST', body: image })
    const file = new FormData()
    file.append('file', blob(PDF, 'application/pdf'), '合同.pdf')
    const up = (await (
      await fetch(srv.action('file'), { method: 'POST', body: file })
    ).json()) as UploadAnswer
    const list = await (await fetch(srv.action('listFile', '&start=0&size=20&noCache=1'))).json()
    assert.deepEqual(
      list.list.map((e: { url: string; original: string }) => [e.url, e.original]),
      [[up.url, '合同.pdf']],
    )
    assert.equal(list.total, 1)
  })

  test('an empty listing is SUCCESS with an empty list and a total of 0', async (t) => {
    const srv = await startTestServer(t)
    const list = await (await fetch(srv.action('listImage', '&start=0&size=20'))).json()
    assert.deepEqual(list, { state: 'SUCCESS', list: [], start: 0, total: 0 })
  })

  test('listImage over JSONP answers the wrapped listing', async (t) => {
    const srv = await startTestServer(t)
    const text = await (
      await fetch(srv.action('listImage', '&start=0&size=20&callback=bd__editor__x1'))
    ).text()
    assert.equal(text, '/**/bd__editor__x1({"state":"SUCCESS","list":[],"start":0,"total":0});')
  })

  test('listing parameters that are negative, NaN, repeated or huge are clamped', async (t) => {
    const srv = await startTestServer(t)
    for (let i = 0; i < 3; i++) {
      const form = new FormData()
      form.append('upfile', blob(png(1, i + 1), 'image/png'), `p${i}.png`)
      await fetch(srv.action('image'), { method: 'POST', body: form })
    }
    for (const [query, start, count] of [
      ['&start=-1&size=2', 0, 2],
      ['&start=NaN&size=2', 0, 2],
      ['&start=abc', 0, 3],
      ['&start=1e309&size=1', 0, 1],
      ['&start[]=1&size=2', 0, 2],
      ['&size=20&size=30', 0, 3],
      ['&start=1&size=0', 1, 1],
      ['&start=0&size=-5', 0, 1],
      ['&start=0&size=100000000', 0, 3],
      ['&start=9007199254740993', 0, 3],
      ['&start=99&size=5', 99, 0],
    ] as const) {
      const list = await (await fetch(srv.action('listImage', query))).json()
      assert.equal(list.state, 'SUCCESS', query)
      assert.equal(list.start, start, query)
      assert.equal(list.list.length, count, query)
      assert.equal(list.total, 3, query)
    }
  })
})
