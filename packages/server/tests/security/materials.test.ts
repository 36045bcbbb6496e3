import assert from 'node:assert/strict'
import { sanitizeMaterialHtml } from '../../src/materials/sanitize.js'
import {
  type Answer,
  adminCreate,
  type MaterialsClient,
  startMaterialsServer,
} from '../helpers/materials.js'
import { describe, type TestContext, test } from '../helpers/test.js'
import { MATERIAL_XSS_PAYLOADS as XSS_PAYLOADS } from '../helpers/xss-payloads.js'

const SAFE_LAYOUT = [
  '<section style="margin:20px 0;padding:16px;background-color:#fafafa;border-left:4px solid #07c160;border-radius:8px"><p style="margin:0;font-size:15px;line-height:1.8;color:#555;font-family:\'微软雅黑\', sans-serif">正文</p></section>',
  '<section style="background-image:url(https://cdn.test/bg.png);background-size:cover;width:80%;height:2px"></section>',
  '<table style="border-collapse:collapse;width:100%"><tbody><tr><td colspan="2" style="border:1px solid #ddd;padding:4px">a</td></tr></tbody></table>',
  '<figure style="margin:0"><img src="https://cdn.test/a.png" alt="图" width="300" /><figcaption style="font-size:12px;color:#999">说明</figcaption></figure>',
  '<ul style="padding-left:20px"><li>一</li><li><strong>二</strong> <em>three</em></li></ul>',
  '<h2 style="text-align:center;transform:rotate(2deg);box-shadow:0 2px 8px rgba(0, 0, 0, 0.06)">Title</h2>',
]

function assertNotPolluted(): void {
  const probe = {} as Record<string, unknown>
  assert.equal(probe.polluted, undefined, 'Object.prototype was polluted')
  assert.equal(probe.admin, undefined, 'Object.prototype was polluted')
  assert.equal(probe.x, undefined, 'Object.prototype was polluted')
}

async function stillServes(c: MaterialsClient): Promise<void> {
  assert.equal((await c.categories()).status, 200)
  assert.equal((await c.search({})).status, 200)
}

/** A clean refusal: a 4xx JSON error, never the internals; the loaders then show nothing. */
function assertRefused(res: Answer, status: number, code: string, label: string): void {
  assert.equal(res.status, status, `${label}: ${JSON.stringify(res.body)}`)
  assert.equal(res.body.error.code, code, label)
  assert.equal(typeof res.body.error.message, 'string')
  assert.doesNotMatch(res.body.error.message, /\n\s+at |sqlite|SELECT|node_modules/i, label)
}

async function stored(c: MaterialsClient, id: number) {
  const admin = await c.admin('GET', `/admin/materials/${id}`)
  const items = (await c.search({ keyword: String(id), pageSize: 100 })).body.items as {
    id: number
    content: string
  }[]
  return { admin: admin.body.content, item: items.find((m) => m.id === id)?.content }
}

describe('S37: material HTML is sanitised on write', () => {
  test('every XSS payload is stored and answered without anything that can run', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    for (const [payload, expected] of XSS_PAYLOADS) {
      const created = await adminCreate(c, 'materials', { name: 'payload', content: payload })
      assert.equal(created.content, expected, payload)
      assert.deepEqual(await stored(c, created.id), { admin: expected, item: expected }, payload)
      assert.equal(sanitizeMaterialHtml(expected), expected, `unstable: ${payload}`)
    }
  })

  test('PUT and PATCH sanitise like POST', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const put = await c.admin('PUT', '/admin/materials/5', {
      name: 'p',
      content: '<img src=x onerror=alert(1)>',
    })
    assert.equal(put.body.content, '<img src="x" />')
    const patch = await c.admin('PATCH', '/admin/materials/5', {
      content: '<a href="javascript:alert(1)">x</a>',
    })
    assert.equal(patch.body.content, '<a>x</a>')
    assert.deepEqual(await stored(c, 5), { admin: '<a>x</a>', item: '<a>x</a>' })
  })

  test('keeps layout tags and safe inline styles unchanged', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    for (const html of SAFE_LAYOUT) {
      const created = await adminCreate(c, 'materials', { name: 'layout', content: html })
      assert.equal(created.content, html)
    }
  })

  test('a positioned overlay is framed in a clipping box and cannot leave the material', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const overlays = [
      '<div style="position:absolute;top:0;left:0;width:100vw;height:100vh;z-index:999">Login</div>',
      '<p>badge</p><span style="position:absolute;right:-9999px;top:-9999px">x</span>',
      // A fake frame followed by an escaping sibling must not pass for a framed material.
      '<div style="position:relative;overflow:hidden">a</div><div style="position:absolute;top:0">b</div>',
    ]
    for (const html of overlays) {
      const created = await adminCreate(c, 'materials', { name: 'overlay', content: html })
      const content = created.content as string
      // The frame wraps the whole material, and cleaning again changes nothing.
      assert.equal(content, `<div style="position:relative;overflow:hidden">${html}</div>`)
      assert.equal(sanitizeMaterialHtml(content), content)
    }
    for (const html of [
      '<div style="position:fixed;inset:0">x</div>',
      '<p style="position:sticky">x</p>',
    ])
      assert.doesNotMatch(sanitizeMaterialHtml(html), /position/)
  })

  test('refuses a thumbnail that is not http(s) or a relative path', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    for (const thumbnail of [
      'javascript:alert(1)',
      'JAVASCRIPT:alert(1)',
      ' javascript:alert(1)',
      'java\tscript:alert(1)',
      'data:image/png;base64,iVBORw0KGgo=',
      'vbscript:msgbox(1)',
      'file:///etc/passwd',
      'https://a.test/x.png" onerror="alert(1)',
      '\\\\evil.test\\share',
    ]) {
      const res = await c.admin('POST', '/admin/materials', { name: 'm', content: '', thumbnail })
      assertRefused(res, 400, 'UE_VALIDATION_FAILED', thumbnail)
    }
    for (const thumbnail of [
      'https://cdn.test/a.png',
      'http://cdn.test/a.png?x=1',
      '/uploads/a.png',
      'img/a.png',
      '//cdn.test/a.png',
    ]) {
      const res = await c.admin('POST', '/admin/materials', { name: 'm', content: '', thumbnail })
      assert.equal(res.status, 201, thumbnail)
      assert.equal(res.body.thumbnail, thumbnail)
    }
  })
})

describe('S38: materials query abuse', () => {
  async function withMaterials(t: TestContext) {
    const srv = await startMaterialsServer(t)
    await adminCreate(srv.materials, 'materials', { name: 'aaaa', content: '<p>a</p>' })
    await adminCreate(srv.materials, 'materials', { name: '100%_满意', content: '<p>b</p>' })
    return srv.materials
  }

  test('a huge pageSize is clamped to 100 and a negative page to 1', async (t) => {
    const c = await withMaterials(t)
    const res = await c.search({ pageSize: 1_000_000, page: -1 })
    assert.equal(res.status, 200)
    assert.deepEqual([res.body.page, res.body.pageSize, res.body.total], [1, 100, 2])
  })

  test('non-finite, non-numeric and structured paging values are refused with 400', async (t) => {
    const c = await withMaterials(t)
    for (const body of [
      '{"page":1e309}',
      '{"pageSize":-1e309}',
      '{"page":"abc"}',
      '{"page":[1]}',
      '{"pageSize":{"$gt":0}}',
      '{"page":true}',
    ])
      assertRefused(await c.search(body), 400, 'UE_VALIDATION_FAILED', body)
  })

  test('a keyword over 100 characters is refused, one of 100 is searched', async (t) => {
    const c = await withMaterials(t)
    assertRefused(await c.search({ keyword: 'a'.repeat(101) }), 400, 'UE_VALIDATION_FAILED', '101')
    const ok = await c.search({ keyword: 'a'.repeat(100) })
    assert.equal(ok.status, 200)
    assert.equal(ok.body.total, 0)
  })

  test('a 1 MB keyword and a 10 MB body are refused with 413 (or a closed connection)', async (t) => {
    const c = await withMaterials(t)
    for (const size of [1024 * 1024, 10 * 1024 * 1024]) {
      const body = JSON.stringify({ keyword: 'a'.repeat(size) })
      const outcome = await c.search(body).then(
        (res) => res,
        () => 'closed' as const,
      )
      if (outcome !== 'closed') assertRefused(outcome, 413, 'UE_BODY_TOO_LARGE', `${size}`)
    }
    await stillServes(c)
  })

  test('a chunked body without a length is cut off at the cap', async (t) => {
    const c = await withMaterials(t)
    let sent = 0
    const stream = new ReadableStream<Uint8Array>({
      start(ctl) {
        ctl.enqueue(new TextEncoder().encode('{"keyword":"'))
      },
      pull(ctl) {
        if (sent >= 2 * 1024 * 1024) return ctl.close()
        sent += 64 * 1024
        ctl.enqueue(new Uint8Array(64 * 1024).fill(0x61))
      },
    })
    const outcome = await fetch(c.url('/materials'), {
      method: 'POST',
      body: stream,
      headers: { 'Content-Type': 'application/json' },
      // @ts-expect-error: Node's fetch needs `duplex` for streamed bodies.
      duplex: 'half',
    }).then(
      async (res) => [res.status, (await res.json()).error.code],
      () => 'closed',
    )
    if (outcome !== 'closed') assert.deepEqual(outcome, [413, 'UE_BODY_TOO_LARGE'])
    await stillServes(c)
  })

  test('LIKE wildcards, regular expressions and SQL in the keyword are plain text', async (t) => {
    const c = await withMaterials(t)
    const totals: Record<string, number> = {}
    for (const keyword of [
      '%_',
      '%',
      '_',
      '.*(a+)+$',
      "' OR '1'='1",
      "'; DROP TABLE materials; --",
    ])
      totals[keyword] = (await c.search({ keyword })).body.total
    assert.deepEqual(totals, {
      '%_': 1,
      '%': 1,
      _: 1,
      '.*(a+)+$': 0,
      "' OR '1'='1": 0,
      "'; DROP TABLE materials; --": 0,
    })
    assert.equal((await c.search({})).body.total, 2)
  })

  test('objects, arrays and SQL where scalars belong are refused with 400', async (t) => {
    const c = await withMaterials(t)
    for (const body of [
      { keyword: { $ne: '' } },
      { keyword: ['a'] },
      { categoryId: [1, 2] },
      { categoryId: '1 OR 1=1' },
      { categoryId: '1; DROP TABLE materials' },
      { categoryId: -1 },
      { categoryId: 1.5 },
      { categoryId: { $gt: 0 } },
      { keyword: 'a\u0000b' },
      [1, 2],
      '"text"',
    ])
      assertRefused(await c.search(body), 400, 'UE_VALIDATION_FAILED', JSON.stringify(body))
    assert.equal((await c.search({})).body.total, 2)
  })

  test('malformed, non-JSON, compressed and deeply nested bodies are refused', async (t) => {
    const c = await withMaterials(t)
    assertRefused(await c.search('{"keyword":'), 400, 'UE_BODY_INVALID', 'truncated')
    assertRefused(
      await c.request('POST', '/materials', 'keyword=a', {
        'Content-Type': 'application/x-www-form-urlencoded',
      }),
      415,
      'UE_MEDIA_TYPE_UNSUPPORTED',
      'form',
    )
    assertRefused(
      await c.request('POST', '/materials', '{}', {
        'Content-Type': 'application/json; charset=latin1',
      }),
      415,
      'UE_MEDIA_TYPE_UNSUPPORTED',
      'charset',
    )
    assertRefused(
      await c.request('POST', '/materials', '{}', {
        'Content-Type': 'application/json',
        'Content-Encoding': 'gzip',
      }),
      415,
      'UE_BODY_ENCODING',
      'gzip',
    )
    assertRefused(
      await c.search(`${'['.repeat(5000)}${']'.repeat(5000)}`),
      400,
      'UE_BODY_INVALID',
      'nesting',
    )
    assertRefused(
      await c.search(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d])),
      400,
      'UE_BODY_INVALID',
      'not UTF-8',
    )
    await stillServes(c)
  })
})

describe('S32: prototype pollution through the materials API', () => {
  test('prototype keys are refused anywhere in a JSON body and pollute nothing', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const bodies = [
      '{"__proto__":{"admin":true,"polluted":1}}',
      '{"constructor":{"prototype":{"polluted":1}}}',
      '{"keyword":"a","nested":{"__proto__":{"x":1}}}',
    ]
    for (const body of bodies) {
      assertRefused(await c.search(body), 400, 'UE_VALIDATION_FAILED', body)
      assertNotPolluted()
    }
    for (const body of [
      '{"name":"m","content":"","custom":{"__proto__":{"polluted":1}}}',
      '{"name":"m","content":"","custom":{"constructor":{"prototype":{"polluted":1}}}}',
      '{"__proto__":{"admin":true},"name":"m","content":""}',
      '{"name":"m","content":"","custom":{"prototype":1}}',
    ]) {
      assertRefused(
        await c.admin('POST', '/admin/materials', body),
        400,
        'UE_VALIDATION_FAILED',
        body,
      )
      assertNotPolluted()
    }
    assertRefused(
      await c.admin('POST', '/admin/categories', '{"name":"c","__proto__":{"polluted":1}}'),
      400,
      'UE_VALIDATION_FAILED',
      'category',
    )
    assertNotPolluted()
    assert.equal((await c.search({})).body.total, 0)
    await stillServes(c)
  })

  test('custom fields cannot replace the fields the designer reads', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    for (const key of ['id', 'name', 'content', 'html', 'title', 'categoryId', 'cover'])
      assertRefused(
        await c.admin('POST', '/admin/materials', {
          name: 'm',
          content: '<p>safe</p>',
          custom: { [key]: '<img src=x onerror=alert(1)>' },
        }),
        400,
        'UE_VALIDATION_FAILED',
        key,
      )
  })
})
