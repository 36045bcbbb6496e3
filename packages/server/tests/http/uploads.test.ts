import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { eventually } from '../helpers/eventually.js'
import { blob, HTML, PDF, png } from '../helpers/fixtures.js'
import { multipartBody } from '../helpers/multipart.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'

async function upload(srv: TestServer, action: string, field: string, bytes: Buffer, name: string) {
  const form = new FormData()
  form.append(field, blob(bytes), name)
  const res = await fetch(srv.action(action), { method: 'POST', body: form })
  assert.equal(res.status, 200)
  return (await res.json()) as { state: string; url: string; original: string; code?: string }
}

async function listTotal(srv: TestServer, action = 'listImage'): Promise<number> {
  return (await (await fetch(srv.action(action))).json()).total
}

describe('uploads through the real server', () => {
  test('renamed action and field names route with no code change', async (t) => {
    const srv = await startTestServer(t, {
      editor: {
        imageActionName: 'uploadimage',
        imageFieldName: 'file',
        imageManagerActionName: 'listimage',
        scrawlActionName: 'crawl',
      },
    })
    const config = await (await fetch(srv.action('config'))).json()
    assert.equal(config.imageActionName, 'uploadimage')
    const up = await upload(srv, 'uploadimage', 'file', png(), 'a.png')
    assert.equal(up.state, 'SUCCESS')
    assert.equal((await (await fetch(srv.action('listimage'))).json()).total, 1)
    const old = await upload(srv, 'image', 'file', png(), 'a.png')
    assert.equal(old.state, '请求地址出错')
    const scrawl = await fetch(srv.action('crawl'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `upfile=${encodeURIComponent(png().toString('base64'))}`,
    })
    assert.equal((await scrawl.json()).state, 'SUCCESS')
  })

  test('a 3 MB image against a 2 MB limit is refused while streaming and nothing is stored', async (t) => {
    const srv = await startTestServer(t, { editor: { imageMaxSize: 2 * 1024 * 1024 } })
    const big = png(1024, 1000, { noise: true })
    assert.ok(big.length > 3_000_000)
    const up = await upload(srv, 'image', 'upfile', big, 'big.png')
    assert.equal(up.state, '文件大小超出网站限制')
    assert.equal(up.code, 'UE_FILE_TOO_LARGE')
    assert.deepEqual(await srv.storedFiles(), [])
    assert.deepEqual(
      await eventually(() => srv.tempFiles(), {
        until: (f) => f.length === 0,
        what: 'no temp files left',
      }),
      [],
    )
    assert.equal(await listTotal(srv), 0)
  })

  test('a body far over the limit is cut off without being read to the end', async (t) => {
    const srv = await startTestServer(t, { editor: { imageMaxSize: 100_000 } })
    const { body, contentType } = multipartBody([
      {
        name: 'upfile',
        filename: 'huge.png',
        value: Buffer.concat([png(), Buffer.alloc(20_000_000)]),
      },
    ])
    const outcome = await fetch(srv.action('image'), {
      method: 'POST',
      body,
      headers: { 'Content-Type': contentType },
    }).then(
      async (res) => (await res.json()).code as string,
      () => 'connection closed',
    )
    assert.ok(['UE_FILE_TOO_LARGE', 'connection closed'].includes(outcome), outcome)
    assert.deepEqual(
      await eventually(() => srv.tempFiles(), {
        until: (f) => f.length === 0,
        what: 'no temp files left',
      }),
      [],
    )
    assert.deepEqual(await srv.storedFiles(), [])
    const config = await fetch(srv.action('config'))
    assert.equal(config.status, 200)
  })

  test('a scrawl whose decoded size exceeds scrawlMaxSize is refused', async (t) => {
    const srv = await startTestServer(t, { editor: { scrawlMaxSize: 1000 } })
    const res = await fetch(srv.action('scrawl'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `upfile=${encodeURIComponent(png(40, 40, { noise: true }).toString('base64'))}`,
    })
    assert.equal((await res.json()).code, 'UE_FILE_TOO_LARGE')
    assert.deepEqual(await srv.storedFiles(), [])
  })

  test('a .jpg whose bytes are HTML is refused and nothing is stored', async (t) => {
    const srv = await startTestServer(t)
    const up = await upload(srv, 'image', 'upfile', HTML, 'photo.jpg')
    assert.equal(up.code, 'UE_CONTENT_MISMATCH')
    assert.notEqual(up.state, 'SUCCESS')
    assert.deepEqual(await srv.storedFiles(), [])
    assert.equal(await listTotal(srv), 0)
  })

  test('a PNG claimed as .jpg is refused because the magic bytes disagree', async (t) => {
    const srv = await startTestServer(t)
    const up = await upload(srv, 'image', 'upfile', png(), 'photo.jpg')
    assert.equal(up.code, 'UE_CONTENT_MISMATCH')
  })

  test('an extension outside the allow-list is refused, whatever its case or tricks', async (t) => {
    const srv = await startTestServer(t)
    for (const name of [
      'a.php',
      'a.PHP',
      'a.png.php',
      'a.svg',
      'a.png.',
      'a.png ',
      '.htaccess',
      'noext',
    ]) {
      const up = await upload(srv, 'image', 'upfile', png(), name)
      assert.equal(up.code, 'UE_TYPE_NOT_ALLOWED', name)
    }
    const upper = await upload(srv, 'image', 'upfile', png(), 'PHOTO.PNG')
    assert.equal(upper.state, 'SUCCESS')
    assert.match(upper.url, /\.png$/)
  })

  test('a traversal name is kept only as display text and stored under a server key', async (t) => {
    const srv = await startTestServer(t)
    const up = await upload(srv, 'image', 'upfile', png(), '../../x.png')
    assert.equal(up.state, 'SUCCESS')
    assert.match(up.url, /^\/uploads\/image\/\d{8}\/[0-9a-z]+\.png$/)
    assert.equal(up.original, 'x.png')
    const stored = await srv.storedFiles()
    assert.equal(stored.length, 1)
    assert.ok(stored[0]?.startsWith('image/'))
  })

  test('markup in a file name never comes back unescaped', async (t) => {
    const srv = await startTestServer(t)
    const form = new FormData()
    form.append('upfile', blob(png()), '<img src=x onerror=alert(1)>.png')
    const res = await fetch(srv.action('image'), { method: 'POST', body: form })
    const text = await res.text()
    assert.doesNotMatch(text, /[<>]/)
    assert.equal(JSON.parse(text).original, 'img src=x onerror=alert(1).png')
  })

  test('concurrent uploads with the same name never collide', async (t) => {
    const srv = await startTestServer(t)
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        upload(srv, 'image', 'upfile', png(1, i + 1), 'same.png'),
      ),
    )
    assert.ok(answers.every((a) => a.state === 'SUCCESS'))
    assert.equal(new Set(answers.map((a) => a.url)).size, 12)
    assert.equal((await srv.storedFiles()).length, 12)
    assert.equal(await listTotal(srv), 12)
  })

  test('an upload cut off mid-body leaves no file and no row', async (t) => {
    const srv = await startTestServer(t)
    const { body, contentType } = multipartBody([
      { name: 'upfile', filename: 'cut.png', value: png(200, 200, { noise: true }) },
    ])
    const { port } = new URL(srv.url)
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(
          `POST /ueditor?action=image HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n\r\n`,
        )
        socket.write(body.subarray(0, Math.floor(body.length / 2)), () => {
          setTimeout(() => {
            socket.destroy()
            resolve()
          }, 100)
        })
      })
      socket.on('error', reject)
    })
    assert.deepEqual(
      await eventually(() => srv.tempFiles(), {
        until: (f) => f.length === 0,
        what: 'no temp files left',
      }),
      [],
    )
    assert.deepEqual(await srv.storedFiles(), [])
    assert.equal(await listTotal(srv), 0)
  })

  test('a file part in an unexpected field is not taken', async (t) => {
    const srv = await startTestServer(t)
    const up = await upload(srv, 'image', 'evil', png(), 'a.png')
    assert.equal(up.code, 'UE_FILE_MISSING')
    assert.deepEqual(await srv.storedFiles(), [])
  })

  test('two file parts in one request refuse the whole request', async (t) => {
    const srv = await startTestServer(t)
    const { body, contentType } = multipartBody([
      { name: 'upfile', filename: 'a.png', value: png() },
      { name: 'upfile', filename: 'b.png', value: png() },
    ])
    const res = await fetch(srv.action('image'), {
      method: 'POST',
      body,
      headers: { 'Content-Type': contentType },
    })
    assert.equal((await res.json()).code, 'UE_TOO_MANY_FILES')
    assert.deepEqual(await srv.storedFiles(), [])
  })

  test('an empty file is refused', async (t) => {
    const srv = await startTestServer(t)
    const up = await upload(srv, 'file', 'file', Buffer.alloc(0), 'empty.pdf')
    assert.equal(up.code, 'UE_FILE_EMPTY')
  })

  test('a text attachment that is really HTML is refused, plain text is accepted', async (t) => {
    const srv = await startTestServer(t)
    assert.equal((await upload(srv, 'file', 'file', HTML, 'notes.txt')).code, 'UE_CONTENT_MISMATCH')
    const ok = await upload(srv, 'file', 'file', Buffer.from('第一行\nsecond line\n'), 'notes.txt')
    assert.equal(ok.state, 'SUCCESS')
    const res = await fetch(`${srv.url}${ok.url}`)
    assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8')
    assert.match(res.headers.get('content-disposition') ?? '', /^attachment/)
  })

  test('documents are served as attachments, images inline', async (t) => {
    const srv = await startTestServer(t)
    const pdf = await upload(srv, 'file', 'file', PDF, 'a.pdf')
    const pdfRes = await fetch(`${srv.url}${pdf.url}`)
    assert.match(pdfRes.headers.get('content-disposition') ?? '', /^attachment/)
    const image = await upload(srv, 'image', 'upfile', png(), 'a.png')
    const imageRes = await fetch(`${srv.url}${image.url}`)
    assert.equal(imageRes.headers.get('content-disposition'), null)
  })
})

describe('errors and routing', () => {
  test('an unknown or missing action gets HTTP 200 with a readable state', async (t) => {
    const srv = await startTestServer(t)
    for (const query of [
      '?action=nope',
      '?action=',
      '',
      '?action=__proto__',
      '?action=IMAGE',
      '?action[]=image',
      '?action=image&action=config',
    ]) {
      const res = await fetch(`${srv.url}/ueditor${query}`)
      assert.equal(res.status, 200, query)
      assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8')
      const body = await res.json()
      assert.equal(body.state, '请求地址出错', query)
      assert.equal(body.code, 'UE_ACTION_UNKNOWN', query)
    }
  })

  test('state texts are English when locale is en', async (t) => {
    const srv = await startTestServer(t, { locale: 'en' })
    const body = await (await fetch(srv.action('nope'))).json()
    assert.equal(body.state, 'Unknown action')
  })

  test('query noise around the action is ignored', async (t) => {
    const srv = await startTestServer(t)
    const res = await fetch(
      `${srv.url}/ueditor?token=abc&action=listImage&&start=0&size=20&encode=utf-8&noCache=123&`,
    )
    assert.equal((await res.json()).state, 'SUCCESS')
  })

  test('an upload sent as GET is refused with a readable state', async (t) => {
    const srv = await startTestServer(t)
    const body = await (await fetch(srv.action('image'))).json()
    assert.equal(body.code, 'UE_METHOD_NOT_ALLOWED')
  })

  test('with errorStatus http, refusals carry their real status code', async (t) => {
    const srv = await startTestServer(t, { http: { errorStatus: 'http' } })
    const res = await fetch(srv.action('nope'))
    assert.equal(res.status, 400)
    const up = new FormData()
    up.append('upfile', blob(HTML), 'a.jpg')
    const refused = await fetch(srv.action('image'), { method: 'POST', body: up })
    assert.equal(refused.status, 415)
  })

  test('a bad JSONP callback is refused as plain JSON that does not echo it', async (t) => {
    const srv = await startTestServer(t)
    for (const cb of [
      'alert(document.domain)//',
      '</script><svg onload=alert(1)>',
      'a.b[c]',
      'x'.repeat(10_000),
      '__proto__',
    ]) {
      const res = await fetch(srv.action('config', `&callback=${encodeURIComponent(cb)}`))
      assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8')
      const text = await res.text()
      assert.equal(JSON.parse(text).code, 'UE_CALLBACK_INVALID')
      assert.ok(!text.includes(cb.slice(0, 12)))
    }
  })

  test('uploads never answer JSONP even when a callback is given', async (t) => {
    const srv = await startTestServer(t)
    const form = new FormData()
    form.append('upfile', blob(png()), 'a.png')
    const res = await fetch(srv.action('image', '&callback=cb'), { method: 'POST', body: form })
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8')
    assert.equal((await res.json()).state, 'SUCCESS')
  })
})
