import assert from 'node:assert/strict'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Readable } from 'node:stream'
import { createFileServer } from '../../src/http/static.js'
import type { StorageKey } from '../../src/shared/types.js'
import type { StorageDriver } from '../../src/storage/driver.js'
import { localDiskStorage } from '../../src/storage/local.js'
import { after, before, describe, test } from '../helpers/test.js'

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001', 'hex')
const PDF = Buffer.from('%PDF-1.7 fake pdf body')
const TEXT = Buffer.from('0123456789abcdefghij')
const SECRET = 'TOP SECRET: outside the storage root'

const FILES: Record<string, Buffer> = {
  'image/20261123/1763890000abc123.png': PNG,
  'file/20261123/report.pdf': PDF,
  'file/20261123/archive.zip': Buffer.from('PK\u0003\u0004 zip'),
  'file/20261123/notes.txt': TEXT,
  'file/20261123/page.html': Buffer.from('<script>alert(1)</script>'),
  'file/20261123/logo.svg': Buffer.from('<svg onload="alert(1)"/>'),
  'file/20261123/noext': Buffer.from('??'),
  'file/20261123/empty.txt': Buffer.alloc(0),
}

describe('createFileServer', () => {
  let outer: string
  let storage: StorageDriver
  /** Every key the server asked the driver about. */
  const touched: string[] = []

  before(async () => {
    outer = await mkdtemp(path.join(tmpdir(), 'ue-static-'))
    // `secret.txt` sits next to the storage root: a traversal that works would serve it.
    await writeFile(path.join(outer, 'secret.txt'), SECRET)
    await mkdir(path.join(outer, 'uploads'))
    await writeFile(path.join(outer, 'uploads', 'secret.txt'), SECRET)
    const local = localDiskStorage({ root: path.join(outer, 'root') })
    for (const [key, bytes] of Object.entries(FILES)) {
      await local.put(key as StorageKey, Readable.from([bytes]), {
        size: bytes.length,
        contentType: 'application/octet-stream',
      })
    }
    storage = {
      kind: 'spy',
      put: local.put,
      copy: local.copy,
      get: (key, range) => {
        touched.push(key)
        return local.get(key, range)
      },
      stat: (key) => {
        touched.push(key)
        return local.stat(key)
      },
      delete: local.delete,
      list: local.list,
    }
  })
  after(async () => {
    await rm(outer, { recursive: true, force: true })
  })

  const serve = (url: string, init?: RequestInit) => {
    const handler = createFileServer({ storage, basePath: '/uploads/' })
    return handler(new Request(`http://local${url}`, init))
  }

  async function bytesOf(res: Response): Promise<Buffer> {
    return Buffer.from(await res.arrayBuffer())
  }

  function assertSafetyHeaders(res: Response): void {
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff')
    assert.equal(res.headers.get('content-security-policy'), "default-src 'none'; sandbox")
    assert.equal(res.headers.get('cross-origin-resource-policy'), 'cross-origin')
  }

  test('an image is served inline with its type, length, caching and safety headers', async () => {
    const res = await serve('/uploads/image/20261123/1763890000abc123.png')
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), 'image/png')
    assert.equal(res.headers.get('content-length'), String(PNG.length))
    assert.equal(res.headers.get('accept-ranges'), 'bytes')
    assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable')
    assert.equal(res.headers.get('content-disposition'), null)
    assertSafetyHeaders(res)
    assert.deepEqual(await bytesOf(res), PNG)
  })

  test('the query string the editor appends is ignored', async () => {
    const res = await serve('/uploads/image/20261123/1763890000abc123.png?noCache=1763890000123')
    assert.equal(res.status, 200)
    assert.deepEqual(await bytesOf(res), PNG)
  })

  test('a percent-encoded but otherwise valid key is decoded once and served', async () => {
    const res = await serve('/uploads/image%2F20261123%2F1763890000abc123%2Epng')
    assert.equal(res.status, 200)
    assert.deepEqual(await bytesOf(res), PNG)
  })

  test('documents and archives are served as attachments named after the key', async () => {
    const cases = [
      ['file/20261123/report.pdf', 'application/pdf', 'report.pdf'],
      ['file/20261123/archive.zip', 'application/zip', 'archive.zip'],
      ['file/20261123/notes.txt', 'text/plain; charset=utf-8', 'notes.txt'],
      ['file/20261123/noext', 'application/octet-stream', 'noext'],
    ] as const
    for (const [key, type, name] of cases) {
      const res = await serve(`/uploads/${key}`)
      assert.equal(res.status, 200, key)
      assert.equal(res.headers.get('content-type'), type, key)
      assert.equal(res.headers.get('content-disposition'), `attachment; filename="${name}"`, key)
      assertSafetyHeaders(res)
      assert.deepEqual(await bytesOf(res), FILES[key])
    }
  })

  test('markup and script types are never served as such', async () => {
    for (const key of ['file/20261123/page.html', 'file/20261123/logo.svg']) {
      const res = await serve(`/uploads/${key}`)
      assert.equal(res.status, 200)
      assert.equal(res.headers.get('content-type'), 'application/octet-stream')
      assert.match(res.headers.get('content-disposition') ?? '', /^attachment; /)
      await res.arrayBuffer()
    }
  })

  test('the type recorded by the index wins, but dangerous types are neutralised', async () => {
    const types: Record<string, string> = {
      'image/20261123/1763890000abc123.png': 'image/webp',
      'file/20261123/noext': 'image/svg+xml',
      'file/20261123/notes.txt': 'text/html; charset=utf-8',
      'file/20261123/report.pdf': 'application/javascript',
    }
    const handler = createFileServer({
      storage,
      basePath: '/uploads',
      lookupType: async (key) => (types[key] ? { mime: types[key] } : null),
    })
    const typeOf = async (key: string) => {
      const res = await handler(new Request(`http://local/uploads/${key}`))
      await res.arrayBuffer()
      return [res.headers.get('content-type'), res.headers.get('content-disposition')]
    }
    assert.deepEqual(await typeOf('image/20261123/1763890000abc123.png'), ['image/webp', null])
    assert.deepEqual(await typeOf('file/20261123/noext'), [
      'application/octet-stream',
      'attachment; filename="noext"',
    ])
    assert.equal((await typeOf('file/20261123/notes.txt'))[0], 'application/octet-stream')
    assert.equal((await typeOf('file/20261123/report.pdf'))[0], 'application/octet-stream')
    // Unknown to the index: the extension decides.
    assert.equal((await typeOf('file/20261123/archive.zip'))[0], 'application/zip')
  })

  test('HEAD answers the headers of GET without a body', async () => {
    const res = await serve('/uploads/file/20261123/report.pdf', { method: 'HEAD' })
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), 'application/pdf')
    assert.equal(res.headers.get('content-length'), String(PDF.length))
    assert.equal(res.headers.get('accept-ranges'), 'bytes')
    assertSafetyHeaders(res)
    assert.equal(res.body, null)
  })

  test('a single byte range answers 206 with exactly that slice', async () => {
    const url = '/uploads/file/20261123/notes.txt'
    const cases = [
      ['bytes=0-4', 0, 4],
      ['bytes=5-', 5, 19],
      ['bytes=-3', 17, 19],
      ['bytes=15-999', 15, 19],
      ['bytes=-999', 0, 19],
      ['bytes=19-19', 19, 19],
    ] as const
    for (const [range, start, end] of cases) {
      const res = await serve(url, { headers: { Range: range } })
      assert.equal(res.status, 206, range)
      assert.equal(res.headers.get('content-range'), `bytes ${start}-${end}/20`, range)
      assert.equal(res.headers.get('content-length'), String(end - start + 1), range)
      assert.deepEqual(await bytesOf(res), TEXT.subarray(start, end + 1), range)
    }
  })

  test('an unsatisfiable range answers 416 with the full size', async () => {
    for (const range of ['bytes=20-', 'bytes=100-200', 'bytes=-0']) {
      const res = await serve('/uploads/file/20261123/notes.txt', { headers: { Range: range } })
      assert.equal(res.status, 416, range)
      assert.equal(res.headers.get('content-range'), 'bytes */20', range)
      assertSafetyHeaders(res)
      assert.equal((await bytesOf(res)).length, 0)
    }
  })

  test('multiple or malformed ranges are ignored and the whole body is served', async () => {
    for (const range of ['bytes=0-1,3-4', 'bytes=abc', 'bytes=5-2', 'items=0-1', 'bytes=-', '']) {
      const res = await serve('/uploads/file/20261123/notes.txt', { headers: { Range: range } })
      assert.equal(res.status, 200, range)
      assert.equal(res.headers.get('content-range'), null, range)
      assert.deepEqual(await bytesOf(res), TEXT, range)
    }
  })

  test('an empty file is served with a zero length', async () => {
    const res = await serve('/uploads/file/20261123/empty.txt')
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-length'), '0')
    assert.equal((await bytesOf(res)).length, 0)
  })

  test('a missing key answers a JSON 404 that is not cached', async () => {
    const res = await serve('/uploads/image/20261123/missing.png')
    assert.equal(res.status, 404)
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8')
    assert.equal(res.headers.get('cache-control'), 'no-store')
    assertSafetyHeaders(res)
    assert.deepEqual(await res.json(), { error: { code: 'UE_NOT_FOUND', message: 'Not found' } })
  })

  test('traversal attempts answer 404 and never reach outside the root', async () => {
    const attempts = [
      '/uploads/../secret.txt',
      '/uploads/%2e%2e/secret.txt',
      '/uploads/..%2fsecret.txt',
      '/uploads/..%2Fsecret.txt',
      '/uploads/image/..%2f..%2fsecret.txt',
      '/uploads/%2e%2e%2fsecret.txt',
      '/uploads/%252e%252e%252fsecret.txt',
      '/uploads/%252e%252e/secret.txt',
      '/uploads/..%5csecret.txt',
      '/uploads/..%5Csecret.txt',
      '/uploads/..\\secret.txt',
      '/uploads/..;/secret.txt',
      '/uploads/image/..;/..;/secret.txt',
      '/uploads/x.png%00.html',
      '/uploads/image/20261123/1763890000abc123.png%00.html',
      '/uploads/%2fetc%2fpasswd',
      '/uploads//etc/passwd',
      '/uploads/.%2e/secret.txt',
      '/uploads/a/b/c/%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2fsecret.txt',
      '/uploads/%c0%ae%c0%ae/secret.txt',
      '/uploads/%e0%80%ae%e0%80%ae%2fsecret.txt',
      '/uploads/.secret.txt',
      '/uploads/secret.txt/',
      '/uploads/%',
      '/uploads/',
      '/secret.txt',
      '/uploadssecret.txt',
    ]
    for (const url of attempts) {
      touched.length = 0
      const res = await serve(url)
      const body = await bytesOf(res)
      assert.equal(res.status, 404, url)
      assert.ok(!body.toString('latin1').includes('TOP SECRET'), url)
      for (const key of touched) {
        assert.ok(!key.includes('..') && !key.startsWith('/'), `${url} reached the driver`)
      }
    }
  })

  test('a key longer than 512 characters answers 404 even when the file exists', async () => {
    const key = `file/${'a'.repeat(200)}/${'b'.repeat(200)}/${'c'.repeat(120)}.txt`
    assert.ok(key.length > 512)
    await storage.put(key as StorageKey, Readable.from([Buffer.from('long')]), {
      size: 4,
      contentType: 'text/plain',
    })
    const res = await serve(`/uploads/${key}`)
    assert.equal(res.status, 404)
    await res.arrayBuffer()
  })

  test('methods other than GET and HEAD answer 405 with an Allow header', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const res = await serve('/uploads/image/20261123/1763890000abc123.png', { method })
      assert.equal(res.status, 405, method)
      assert.equal(res.headers.get('allow'), 'GET, HEAD', method)
      assertSafetyHeaders(res)
      await res.arrayBuffer()
    }
  })
})
