import assert from 'node:assert/strict'
import { blob, png } from '../helpers/fixtures.js'
import {
  assertNoLeak,
  assertStillServes,
  assertUnchanged,
  expectRefused,
  rawExchange,
  snapshot,
} from '../helpers/hostile.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'

async function uploadImages(srv: TestServer, count: number): Promise<string[]> {
  const urls: string[] = []
  for (let i = 0; i < count; i++) {
    const form = new FormData()
    form.append('upfile', blob(png(1, i + 1)), `p${i}.png`)
    const up = await (await fetch(srv.action('image'), { method: 'POST', body: form })).json()
    urls.push(up.url)
  }
  return urls
}

async function listing(srv: TestServer, action: string, query: string) {
  const res = await fetch(srv.action(action, query))
  const text = await res.text()
  assertNoLeak(srv, text, query)
  assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8')
  return JSON.parse(text) as {
    state: string
    start: number
    total: number
    list: { url: string }[]
  }
}

describe('S33: listing parameter abuse', () => {
  test('hostile start and size values are clamped integers and change nothing', async (t) => {
    const srv = await startTestServer(t)
    await uploadImages(srv, 3)
    const before = await snapshot(srv)
    for (const [query, start, count] of [
      ['&start=-1&size=2', 0, 2],
      ['&start=1e309&size=1', 0, 1],
      ['&start=abc', 0, 3],
      ['&start=0x10', 0, 3],
      ['&start=%20', 0, 3],
      ['&size=0', 0, 1],
      ['&size=-5', 0, 1],
      ['&size=100000000', 0, 3],
      ['&size=1e3', 0, 3],
      ['&start[]=1&size=2', 0, 2],
      ['&start[__proto__]=1', 0, 3],
      ['&size=20&size=30', 0, 3],
      ['&start=9007199254740993', 0, 3],
      ['&start=99999999999999999999', 0, 3],
      ['&start=2&size=2', 2, 1],
    ] as const) {
      const list = await listing(srv, 'listImage', query)
      assert.equal(list.state, 'SUCCESS', query)
      assert.equal(list.start, start, query)
      assert.equal(list.list.length, count, query)
      assert.equal(list.total, 3, query)
    }
    await assertUnchanged(srv, before)
    await assertStillServes(srv)
  })
})

describe('S34: listing path injection', () => {
  test('path, dir and list-path parameters are ignored', async (t) => {
    const srv = await startTestServer(t)
    const urls = await uploadImages(srv, 2)
    const plain = await listing(srv, 'listImage', '')
    assert.deepEqual(
      plain.list.map((e) => e.url),
      [...urls].reverse(),
    )
    const before = await snapshot(srv)
    for (const query of [
      '&path=../../',
      '&dir=/etc',
      '&imageManagerListPath=/',
      '&prefix=../',
      '&category=file',
      '&ext=.php',
    ]) {
      assert.deepEqual(await listing(srv, 'listImage', query), plain, query)
      assert.equal((await listing(srv, 'listFile', query)).total, 0, query)
    }
    await assertUnchanged(srv, before)
    await assertStillServes(srv)
  })
})

describe('S35: traversal and Unicode tricks on the file route', () => {
  const PATHS = [
    '/uploads/..%2f..%2fpackage.json',
    '/uploads/%2e%2e/%2e%2e/etc/passwd',
    '/uploads/..%5c..%5cwin.ini',
    '/uploads/%252e%252e%252f',
    '/uploads/..;/x',
    '/uploads/x.png%00.html',
    '/uploads/%c0%ae%c0%ae/%c0%ae%c0%ae/etc/passwd',
    '/uploads/%ef%bc%8e%ef%bc%8e%ef%bc%8fueditor.db',
    '/uploads/.%2e/ueditor.db',
    '/uploads//etc/passwd',
    '/uploads/%2fetc%2fpasswd',
    '/uploads/image/%2e%2e/%2e%2e/ueditor.db',
    '/uploads/..%u2216ueditor.db',
    '/uploads/.htaccess',
    '/uploads/%00',
    `/uploads/${'a/'.repeat(600)}x.png`,
  ]

  test('every hostile path is a JSON 404 or 400 and reads nothing outside the root', async (t) => {
    const srv = await startTestServer(t)
    await uploadImages(srv, 1)
    for (const path of PATHS)
      for (const method of ['GET', 'HEAD'])
        await expectRefused(srv, () => fetch(`${srv.url}${path}`, { method }), {
          label: `${method} ${path}`,
        })
  })

  test('raw request targets that fetch would normalise are refused too', async (t) => {
    const srv = await startTestServer(t)
    await uploadImages(srv, 1)
    const before = await snapshot(srv)
    for (const target of [
      '/uploads/../ueditor.db',
      '/uploads/../../etc/passwd',
      '/uploads/./../ueditor.db',
      '/uploads\\..\\ueditor.db',
      '/uploads/image/../../ueditor.db',
    ]) {
      const exchange = await rawExchange(srv, [
        `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
      ])
      assert.match(exchange.text, /^HTTP\/1\.1 (400|404) /, target)
      assert.doesNotMatch(exchange.text, /SQLite format|root:/, target)
      assertNoLeak(srv, exchange.text, target)
    }
    await assertUnchanged(srv, before)
    await assertStillServes(srv)
  })
})
