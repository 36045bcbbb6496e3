import assert from 'node:assert/strict'
import sharp from 'sharp'
import type { ServerConfigInput } from '../../src/config/schema.js'
import { type CatchAnswer, type CatchEntry, catchUrls } from '../helpers/catch.js'
import { eventually } from '../helpers/eventually.js'
import {
  type OriginImages,
  type OriginServer,
  originImages,
  startInternalService,
  startOriginServer,
} from '../helpers/origin-server.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { before, describe, test } from '../helpers/test.js'

const FAILED = '抓取远程图片失败'
const NOT_IMAGE = '链接contentType不正确'
const TOO_LARGE = '文件大小超出网站限制'

let images: OriginImages
before(async () => {
  images = await originImages()
})

/** A server that may fetch from the fixture origin (and only from it, being loopback). */
async function setup(
  t: { after(fn: () => Promise<void>): void },
  config: ServerConfigInput = {},
): Promise<{ srv: TestServer; origin: OriginServer }> {
  const origin = await startOriginServer(t, images)
  const srv = await startTestServer(t, {
    ...config,
    editor: {
      catcherLocalDomain: ['img.local.example'],
      catcherAllowFiles: ['.png', '.jpg', '.jpeg', '.gif', '.bmp', '.webp'],
      catcherMaxSize: 256 * 1024,
      ...config.editor,
    },
    catcher: { allowHosts: [origin.host], ...config.catcher },
  })
  return { srv, origin }
}

async function catchOne(srv: TestServer, source: string): Promise<CatchEntry> {
  return (await catchUrls(srv, [source])).list[0] as CatchEntry
}

/** Fetches a stored capture back and returns its bytes after checking how it is served. */
async function servedImage(srv: TestServer, entry: CatchEntry, format: string): Promise<Buffer> {
  const res = await fetch(`${srv.url}${entry.url}`)
  assert.equal(res.status, 200)
  assert.equal(res.headers.get('content-type'), `image/${format}`)
  const bytes = Buffer.from(await res.arrayBuffer())
  assert.equal(bytes.length, entry.size)
  assert.equal((await sharp(bytes).metadata()).format, format)
  return bytes
}

async function assertNothingStored(srv: TestServer) {
  assert.deepEqual(await srv.storedFiles(), [])
  assert.deepEqual(
    await eventually(srv.tempFiles, { until: (f) => f.length === 0, what: 'no temp files left' }),
    [],
  )
}

describe('catch: remote images are captured into storage', () => {
  const cases = [
    { path: '/a.png', ext: '.png', format: 'png', original: 'a.png' },
    { path: '/photo.jpg', ext: '.jpg', format: 'jpeg', original: 'photo.jpg' },
    { path: '/anim.gif', ext: '.gif', format: 'gif', original: 'anim.gif' },
    { path: '/pic.webp', ext: '.webp', format: 'webp', original: 'pic.webp' },
    { path: '/image', ext: '.jpg', format: 'jpeg', original: 'image' },
  ]
  for (const c of cases) {
    test(`${c.path} is stored as ${c.ext}, decided by its bytes, and listed`, async (t) => {
      const { srv, origin } = await setup(t)
      const entry = await catchOne(srv, origin.url(c.path))
      assert.equal(entry.state, 'SUCCESS')
      assert.match(
        entry.url ?? '',
        new RegExp(`^/uploads/catch/\\d{8}/\\d+[0-9a-z]{24}\\${c.ext}$`),
      )
      assert.equal(entry.title, entry.url?.split('/').pop())
      assert.equal(entry.original, c.original)
      await servedImage(srv, entry, c.format)
      const stored = await srv.storedFiles()
      assert.deepEqual(stored, [entry.url?.slice('/uploads/'.length)])
      const list = (await (await fetch(srv.action('listImage'))).json()) as {
        list: { url: string }[]
      }
      assert.deepEqual(
        list.list.map((e) => e.url),
        [entry.url],
      )
      assert.deepEqual(
        await eventually(srv.tempFiles, {
          until: (f) => f.length === 0,
          what: 'no temp files left',
        }),
        [],
      )
    })
  }

  test('WebP is refused when catcherAllowFiles does not list it, whatever the URL says', async (t) => {
    const { srv, origin } = await setup(t, {
      editor: { catcherAllowFiles: ['.png', '.jpg', '.jpeg', '.gif', '.bmp'] },
    })
    const entry = await catchOne(srv, origin.url('/pic.webp'))
    assert.equal(entry.state, NOT_IMAGE)
    assert.equal(entry.code, 'UE_REMOTE_NOT_IMAGE')
    await assertNothingStored(srv)
  })

  test('the x.gif?.aspx web shell is stored as a plain .gif without its script', async (t) => {
    const { srv, origin } = await setup(t)
    for (const source of [
      origin.url('/shell.gif?.aspx'),
      origin.url('/shell.gif#.aspx'),
      origin.url('/shell.gif?a=.php'),
    ]) {
      const entry = await catchOne(srv, source)
      assert.equal(entry.state, 'SUCCESS', source)
      assert.match(entry.url ?? '', /\/[0-9a-z]+\.gif$/)
      assert.equal(entry.original, 'shell.gif')
      const bytes = await servedImage(srv, entry, 'gif')
      assert.ok(!bytes.includes('Response.Write'), 'the script text is not served back')
    }
    const stored = await srv.storedFiles()
    assert.equal(stored.length, 3)
    for (const key of stored) assert.match(key, /^catch\/\d{8}\/[0-9a-z]+\.gif$/)
  })

  test('HTML labelled image/png is refused and nothing is stored', async (t) => {
    const { srv, origin } = await setup(t)
    const entry = await catchOne(srv, origin.url('/fake.png'))
    assert.equal(entry.state, NOT_IMAGE)
    await assertNothingStored(srv)
  })

  test('a redirect chain of three hops is followed to the image', async (t) => {
    const { srv, origin } = await setup(t)
    const entry = await catchOne(srv, origin.url('/r/3'))
    assert.equal(entry.state, 'SUCCESS')
    assert.match(entry.url ?? '', /\.png$/)
    assert.deepEqual(origin.paths(), ['/r/3', '/r/2', '/r/1', '/a.png'])
  })

  test('a fourth redirect is not followed', async (t) => {
    const { srv, origin } = await setup(t)
    const entry = await catchOne(srv, origin.url('/r/4'))
    assert.equal(entry.state, FAILED)
    assert.deepEqual(origin.paths(), ['/r/4', '/r/3', '/r/2', '/r/1'])
    await assertNothingStored(srv)
  })

  test('a redirect to a host that is not allowed, or to a non-http URL, fails', async (t) => {
    const { srv, origin } = await setup(t)
    const internal = await startInternalService(t)
    const targets = [
      `http://127.0.0.1:${internal.port}/secret.png`,
      `http://localhost:${origin.port}/a.png`,
      'file:///etc/passwd',
      'gopher://127.0.0.1:6379/_INFO',
    ]
    const answer = await catchUrls(
      srv,
      targets.map((to) => origin.url(`/to?url=${encodeURIComponent(to)}`)),
    )
    for (const entry of answer.list) assert.equal(entry.state, FAILED, entry.source)
    assert.equal(internal.connections(), 0)
    await assertNothingStored(srv)
  })

  test('a body larger than catcherMaxSize is cut off while streaming and leaves nothing', async (t) => {
    const { srv, origin } = await setup(t, { editor: { catcherMaxSize: 64 * 1024 } })
    const answer = await catchUrls(srv, [origin.url('/huge.png'), origin.url('/declared-huge.png')])
    for (const entry of answer.list) {
      assert.equal(entry.state, TOO_LARGE)
      assert.equal(entry.code, 'UE_FILE_TOO_LARGE')
    }
    await assertNothingStored(srv)
  })

  test('a body that stalls is given up after catcher.timeoutMs', async (t) => {
    const { srv, origin } = await setup(t, { catcher: { timeoutMs: 500 } })
    const entry = await catchOne(srv, origin.url('/slow.png'))
    assert.equal(entry.state, FAILED)
    await assertNothingStored(srv)
  })

  test('a 404 or a compressed body fails with the generic state, never the remote text', async (t) => {
    const { srv, origin } = await setup(t)
    const answer = await catchUrls(srv, [origin.url('/missing.png'), origin.url('/gzip.png')])
    for (const entry of answer.list) {
      assert.equal(entry.state, FAILED)
      assert.equal(entry.code, 'UE_REMOTE_FAILED')
      assert.deepEqual(Object.keys(entry).sort(), ['code', 'source', 'state'])
    }
    await assertNothingStored(srv)
  })

  test('several sources come back in request order, each with its own state', async (t) => {
    const { srv, origin } = await setup(t)
    const sources = [
      origin.url('/photo.jpg'),
      origin.url('/fake.png'),
      'ftp://127.0.0.1/a.png',
      origin.url('/a.png?x=<b>&y="1"'),
      origin.url('/missing.png'),
      origin.url('/anim.gif'),
    ]
    const answer = await catchUrls(srv, sources)
    assert.deepEqual(
      answer.list.map((e) => e.state),
      ['SUCCESS', NOT_IMAGE, '链接不是http链接', 'SUCCESS', FAILED, 'SUCCESS'],
    )
    assert.deepEqual(
      answer.list.map((e) => e.url?.split('.').pop()),
      ['jpg', undefined, undefined, 'png', undefined, 'gif'],
    )
    assert.equal((await srv.storedFiles()).length, 3)
  })

  test('a plain `source` field works as well as `source[]`', async (t) => {
    const { srv, origin } = await setup(t)
    const answer = await catchUrls(srv, [origin.url('/a.png')], { field: 'source' })
    assert.equal(answer.list[0]?.state, 'SUCCESS')
  })

  test('sources beyond catcher.maxSources are refused without being fetched', async (t) => {
    const { srv, origin } = await setup(t, { catcher: { maxSources: 2 } })
    const sources = ['/a.png', '/photo.jpg', '/anim.gif', '/pic.webp'].map(origin.url)
    const answer = await catchUrls(srv, sources)
    assert.deepEqual(
      answer.list.map((e) => e.code ?? e.state),
      ['SUCCESS', 'SUCCESS', 'UE_REMOTE_TOO_MANY', 'UE_REMOTE_TOO_MANY'],
    )
    assert.deepEqual(origin.paths().sort(), ['/a.png', '/photo.jpg'])
  })

  test('no more than catcher.concurrency sources are fetched at once', async (t) => {
    const { srv, origin } = await setup(t, { catcher: { concurrency: 2 } })
    const sources = [1, 2, 3, 4, 5, 6].map((i) => origin.url(`/held.png?i=${i}`))
    const answer = await catchUrls(srv, sources)
    assert.ok(answer.list.every((e) => e.state === 'SUCCESS'))
    assert.equal(origin.paths().length, 6)
    // At most the limit; an unbounded fan-out reaches 6 here.
    const peak = origin.peakHeld()
    assert.ok(peak >= 1 && peak <= 2, `peak ${peak}`)
  })

  test('a source that sends 100 Continue and 103 Early Hints before its answer is captured', async (t) => {
    const { srv, origin } = await setup(t)
    const entry = await catchOne(srv, origin.url('/continue.png'))
    assert.equal(entry.state, 'SUCCESS', JSON.stringify(entry))
    await servedImage(srv, entry, 'png')
  })

  test('hosts in catcherLocalDomain are not fetched', async (t) => {
    const { srv, origin } = await setup(t, {
      editor: { catcherLocalDomain: ['localhost', 'img.local.example'] },
    })
    const viaLocalhost = origin.url('/a.png').replace('127.0.0.1', 'localhost')
    const answer = await catchUrls(srv, [viaLocalhost, 'http://img.local.example/a.png'])
    for (const entry of answer.list) {
      assert.equal(entry.code, 'UE_REMOTE_LOCAL_DOMAIN')
      assert.equal(entry.state, '本站域名的图片无需抓取')
    }
    assert.equal(origin.connections(), 0)
    await assertNothingStored(srv)
  })

  test('the default catcherLocalDomain keeps localhost out, but an allow-listed 127.0.0.1:port is fetched', async (t) => {
    const origin = await startOriginServer(t, images)
    const srv = await startTestServer(t, { catcher: { allowHosts: [origin.host] } })
    const local = await catchOne(srv, origin.url('/a.png').replace('127.0.0.1', 'localhost'))
    assert.equal(local.code, 'UE_REMOTE_LOCAL_DOMAIN')
    assert.equal(origin.connections(), 0)
    // The operator's explicit allow-list entry wins over the default local domain 127.0.0.1.
    const listed = await catchOne(srv, origin.url('/a.png'))
    assert.equal(listed.state, 'SUCCESS')
    assert.equal(origin.connections(), 1)
  })

  test('the fetch sends identity encoding and a User-Agent, and no cookies or credentials', async (t) => {
    const { srv, origin } = await setup(t, { catcher: { userAgent: 'catcher-test/1' } })
    await catchUrls(srv, [origin.url('/a.png')], {
      headers: { Cookie: 'session=secret', Authorization: 'Bearer secret' },
    })
    const headers = origin.requests[0]?.headers ?? {}
    assert.equal(headers['accept-encoding'], 'identity')
    assert.equal(headers['user-agent'], 'catcher-test/1')
    assert.match(headers.accept ?? '', /image\/png/)
    for (const name of ['cookie', 'authorization', 'referer', 'origin'])
      assert.equal(headers[name], undefined, name)
  })

  test("referer 'origin' sends the image's own origin, for hotlink-protected images", async (t) => {
    const { srv, origin } = await setup(t, { catcher: { referer: 'origin' } })
    const entry = await catchOne(srv, origin.url('/r/1'))
    assert.equal(entry.state, 'SUCCESS')
    assert.deepEqual(
      origin.requests.map((r) => r.headers.referer),
      [`${origin.url('/')}`, `${origin.url('/')}`],
    )
  })
})

describe('catch over JSONP', () => {
  test('when enabled, a JSONP GET with source[] in the query captures and answers the callback', async (t) => {
    const { srv, origin } = await setup(t, {
      http: { jsonpActions: ['config', 'list', 'catch'] },
    })
    const query = `&source%5B%5D=${encodeURIComponent(origin.url('/a.png'))}&source%5B%5D=${encodeURIComponent(origin.url('/fake.png'))}&callback=bd__editor__k3j9x2`
    const res = await fetch(srv.action('catch', query))
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), 'application/javascript; charset=utf-8')
    const text = await res.text()
    const match = /^\/\*\*\/bd__editor__k3j9x2\((.*)\);$/s.exec(text)
    assert.ok(match, text)
    const answer = JSON.parse(match[1] as string) as CatchAnswer
    assert.equal(answer.state, 'SUCCESS')
    assert.deepEqual(
      answer.list.map((e) => [e.state, e.source]),
      [
        ['SUCCESS', origin.url('/a.png')],
        [NOT_IMAGE, origin.url('/fake.png')],
      ],
    )
    assert.equal((await srv.storedFiles()).length, 1)
  })

  test('when disabled (the default), a JSONP catch gets a JSONP list of refusals and fetches nothing', async (t) => {
    const { srv, origin } = await setup(t)
    const sources = [origin.url('/a.png'), 'http://elsewhere.example/b.jpg']
    const query = `${sources.map((s) => `&source%5B%5D=${encodeURIComponent(s)}`).join('')}&callback=bd__editor__x`
    const res = await fetch(srv.action('catch', query))
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), 'application/javascript; charset=utf-8')
    const match = /^\/\*\*\/bd__editor__x\((.*)\);$/s.exec(await res.text())
    assert.ok(match)
    const answer = JSON.parse(match[1] as string) as CatchAnswer
    assert.equal(answer.state, 'SUCCESS')
    assert.deepEqual(
      answer.list,
      sources.map((source) => ({
        state: '未开启跨域抓取远程图片',
        code: 'UE_REMOTE_JSONP_DISABLED',
        source,
      })),
    )
    assert.equal(origin.connections(), 0)
    await assertNothingStored(srv)
  })

  test('a GET catch without a callback is refused as a wrong method', async (t) => {
    const { srv, origin } = await setup(t)
    const res = await fetch(
      srv.action('catch', `&source%5B%5D=${encodeURIComponent(origin.url('/a.png'))}`),
    )
    assert.equal(res.status, 200)
    assert.equal(((await res.json()) as { code: string }).code, 'UE_METHOD_NOT_ALLOWED')
    assert.equal(origin.connections(), 0)
  })
})

describe('a catch refused as a whole', () => {
  test('still answers a list whose first entry carries the refusal, so the editor goes on', async (t) => {
    const srv = await startTestServer(t)
    const res = await fetch(srv.action('catch', '&'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Encoding': 'gzip' },
      body: 'source%5B%5D=http%3A%2F%2Fexample.com%2Fa.png',
    })
    assert.equal(res.status, 200)
    const answer = await res.json()
    assert.equal(answer.code, 'UE_BODY_ENCODING')
    assert.equal(answer.list.length, 1)
    assert.equal(answer.list[0].code, 'UE_BODY_ENCODING')
    assert.notEqual(answer.list[0].state, 'SUCCESS')
  })

  test('over JSONP the refusal is wrapped in the callback, never a bare JSON the script tag chokes on', async (t) => {
    const srv = await startTestServer(t, {
      http: { jsonpActions: ['config', 'list', 'catch'] },
      limits: { uploadsPerMinute: 1 },
    })
    const url = srv.action(
      'catch',
      `&source%5B%5D=${encodeURIComponent('http://127.0.0.1:9/a.png')}&callback=bd__editor__r1`,
    )
    await (await fetch(url)).text()
    const second = await fetch(url)
    assert.equal(second.headers.get('content-type'), 'application/javascript; charset=utf-8')
    const text = await second.text()
    const match = /^\/\*\*\/bd__editor__r1\((.*)\);$/s.exec(text)
    assert.ok(match, text)
    const answer = JSON.parse(match[1] as string)
    assert.equal(answer.code, 'UE_RATE_LIMITED')
    assert.equal(answer.list[0].code, 'UE_RATE_LIMITED')
  })
})
