import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Logger } from '../../src/shared/types.js'
import { startServer } from '../../src/standalone/serve.js'
import {
  adminCreate,
  type MaterialsClient,
  materialsClient,
  startMaterialsServer,
} from '../helpers/materials.js'
import { rawSqlite } from '../helpers/sqlite.js'
import { describe, test } from '../helpers/test.js'

async function category(c: MaterialsClient, name: string, parentId: number | null, order = 0) {
  return (await adminCreate(c, 'categories', { name, parentId, order })).id as number
}

async function material(c: MaterialsClient, body: Record<string, unknown>) {
  return (await adminCreate(c, 'materials', { content: '<p>x</p>', ...body })).id as number
}

async function idsOf(c: MaterialsClient, body: unknown): Promise<number[]> {
  const res = await c.search(body)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.items.map((m: { id: number }) => m.id)
}

describe('GET /materials/categories', () => {
  test('answers the tree sorted by order then id, children always an array', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const a = await category(c, 'A', null, 2)
    const b = await category(c, 'B', null, 1)
    const cc = await category(c, 'C', null, 2)
    const b2 = await category(c, 'B2', b, 5)
    const b1 = await category(c, 'B1', b, 1)
    const b1x = await category(c, 'B1x', b1, 0)

    const res = await c.categories()
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8')
    const leaf = (id: number, name: string, parentId: number | null, order: number) => ({
      id,
      name,
      parentId,
      order,
      children: [],
    })
    assert.deepEqual(res.body, [
      {
        id: b,
        name: 'B',
        parentId: null,
        order: 1,
        children: [
          { ...leaf(b1, 'B1', b, 1), children: [leaf(b1x, 'B1x', b1, 0)] },
          leaf(b2, 'B2', b, 5),
        ],
      },
      leaf(a, 'A', null, 2),
      leaf(cc, 'C', null, 2),
    ])
  })

  test('answers an empty array for an empty store', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const res = await c.categories()
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, [])
  })
})

describe('POST /materials/materials', () => {
  test('answers items with id, name, content, categoryId, thumbnail and the custom fields', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const cat = await category(c, '卡片', null)
    const id = await material(c, {
      name: '提示卡片',
      content: '<section style="color:#333;padding:8px">你好</section>',
      categoryId: cat,
      thumbnail: 'https://cdn.example/card.png',
      tags: ['卡片', 'tip'],
      custom: { author: '林小雨', views: 12, vip: true, extra: { level: 2 } },
    })

    const res = await c.search({ categoryId: 0, keyword: '', page: 1, pageSize: 100 })
    assert.equal(res.status, 200)
    assert.deepEqual(Object.keys(res.body).sort(), ['items', 'page', 'pageSize', 'total'])
    assert.equal(res.body.total, 1)
    assert.equal(res.body.page, 1)
    assert.equal(res.body.pageSize, 100)
    const [item] = res.body.items
    assert.deepEqual(item, {
      author: '林小雨',
      views: 12,
      vip: true,
      extra: { level: 2 },
      id,
      name: '提示卡片',
      content: '<section style="color:#333;padding:8px">你好</section>',
      categoryId: cat,
      thumbnail: 'https://cdn.example/card.png',
      tags: ['卡片', 'tip'],
      createdAt: item.createdAt,
      updatedAt: item.updatedAt,
    })
    for (const time of [item.createdAt, item.updatedAt])
      assert.match(time, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
  })

  test('uses numbers for ids everywhere, so the designer can compare them with ===', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const parent = await category(c, 'parent', null)
    const child = await category(c, 'child', parent)
    await material(c, { name: 'm', categoryId: child })

    const [tree] = (await c.categories()).body
    const [item] = (await c.search({ categoryId: child })).body.items
    assert.equal(typeof tree.id, 'number')
    assert.equal(tree.parentId, null)
    assert.equal(typeof tree.children[0].id, 'number')
    assert.equal(tree.children[0].parentId, tree.id)
    assert.equal(typeof item.id, 'number')
    assert.equal(item.categoryId, tree.children[0].id)
  })

  test('answers thumbnail and categoryId as null when the material has none', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    await material(c, { name: 'bare' })
    const [item] = (await c.search({})).body.items
    assert.equal(item.thumbnail, null)
    assert.equal(item.categoryId, null)
    assert.deepEqual(item.tags, [])
  })

  test('treats categoryId 0, "", null and absent as all, uncategorised materials included', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const cat = await category(c, 'c', null)
    const a = await material(c, { name: 'a', categoryId: cat })
    const b = await material(c, { name: 'b' })
    const all = [b, a]

    assert.deepEqual(await idsOf(c, { categoryId: 0 }), all)
    assert.deepEqual(await idsOf(c, { categoryId: '' }), all)
    assert.deepEqual(await idsOf(c, { categoryId: null }), all)
    assert.deepEqual(await idsOf(c, {}), all)
    assert.deepEqual(await idsOf(c, { categoryId: String(cat) }), [a])
  })

  test('includes the descendants of the chosen category', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const top = await category(c, 'top', null)
    const mid = await category(c, 'mid', top)
    const low = await category(c, 'low', mid)
    const other = await category(c, 'other', null)
    const inTop = await material(c, { name: 'in top', categoryId: top })
    const inMid = await material(c, { name: 'in mid', categoryId: mid })
    const inLow = await material(c, { name: 'in low', categoryId: low })
    await material(c, { name: 'in other', categoryId: other })

    assert.deepEqual(await idsOf(c, { categoryId: top }), [inLow, inMid, inTop])
    assert.deepEqual(await idsOf(c, { categoryId: mid }), [inLow, inMid])
    assert.deepEqual(await idsOf(c, { categoryId: low }), [inLow])
  })

  test('answers the empty page for a category that does not exist', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    await material(c, { name: 'a' })
    const res = await c.search({ categoryId: 999, page: 1, pageSize: 100 })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { items: [], total: 0, page: 1, pageSize: 100 })
  })

  test('matches the keyword in names and tags, CJK and ASCII case included, or an exact id', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const title = await material(c, { name: '本期导读 Title', tags: ['标题'] })
    const quote = await material(c, { name: 'Quote box', tags: ['引用', 'pull quote'] })
    const pct = await material(c, { name: '100% 满意', tags: ['a_b'] })

    assert.deepEqual(await idsOf(c, { keyword: '导读' }), [title])
    assert.deepEqual(await idsOf(c, { keyword: '标题' }), [title])
    assert.deepEqual(await idsOf(c, { keyword: '引用' }), [quote])
    assert.deepEqual(await idsOf(c, { keyword: 'QUOTE' }), [quote])
    assert.deepEqual(await idsOf(c, { keyword: '  title  ' }), [title])
    assert.deepEqual(await idsOf(c, { keyword: 'nothing like it' }), [])
    assert.deepEqual(await idsOf(c, { keyword: String(quote) }), [quote])
    assert.deepEqual(await idsOf(c, { keyword: '100' }), [pct])
  })

  test('takes LIKE wildcards literally', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const pct = await material(c, { name: '100% 满意' })
    const under = await material(c, { name: 'snake_case' })
    await material(c, { name: 'plain words' })

    assert.deepEqual(await idsOf(c, { keyword: '%' }), [pct])
    assert.deepEqual(await idsOf(c, { keyword: '_' }), [under])
    assert.deepEqual(await idsOf(c, { keyword: '%_' }), [])
    assert.deepEqual(await idsOf(c, { keyword: 'e_c' }), [under])
    assert.deepEqual(await idsOf(c, { keyword: 's%e' }), [])
  })

  test('reads the designer parameter name keywords when keyword is absent', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const a = await material(c, { name: 'alpha' })
    await material(c, { name: 'beta' })
    assert.deepEqual(await idsOf(c, { keywords: 'alp' }), [a])
    assert.deepEqual(await idsOf(c, { keyword: 'alp', keywords: 'beta' }), [a])
  })

  test('defaults page to 1 and pageSize to 20, clamps pageSize to 1-100 and answers what it used', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const ids: number[] = []
    for (let i = 0; i < 105; i++) ids.push(await material(c, { name: `m${i}` }))
    const newest = ids.reverse()
    const page = async (body: unknown) => {
      const res = await c.search(body)
      assert.equal(res.status, 200, JSON.stringify(res.body))
      const { items, ...rest } = res.body
      return { ids: items.map((m: { id: number }) => m.id), ...rest }
    }

    assert.deepEqual(await page({}), {
      ids: newest.slice(0, 20),
      total: 105,
      page: 1,
      pageSize: 20,
    })
    assert.deepEqual(await page({ pageSize: 100 }), {
      ids: newest.slice(0, 100),
      total: 105,
      page: 1,
      pageSize: 100,
    })
    assert.deepEqual((await page({ pageSize: 1_000_000 })).pageSize, 100)
    assert.deepEqual((await page({ pageSize: 1_000_000 })).ids.length, 100)
    assert.deepEqual(await page({ pageSize: 0 }), {
      ids: newest.slice(0, 1),
      total: 105,
      page: 1,
      pageSize: 1,
    })
    assert.equal((await page({ pageSize: -5 })).pageSize, 1)
    assert.equal((await page({ pageSize: 2.7 })).pageSize, 2)
    assert.equal((await page({ page: 0 })).page, 1)
    assert.equal((await page({ page: -1 })).page, 1)
    assert.deepEqual(await page({ page: 2, pageSize: 100 }), {
      ids: newest.slice(100),
      total: 105,
      page: 2,
      pageSize: 100,
    })
    assert.deepEqual(await page({ page: 9, pageSize: 50 }), {
      ids: [],
      total: 105,
      page: 9,
      pageSize: 50,
    })
  })

  test('keeps a stable order: newest first, pages that add up to the whole list', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const ids: number[] = []
    for (let i = 0; i < 23; i++) ids.push(await material(c, { name: `m${i}` }))
    const pages: number[] = []
    for (let p = 1; p <= 5; p++) pages.push(...(await idsOf(c, { page: p, pageSize: 5 })))

    assert.deepEqual(
      pages,
      [...ids].sort((a, b) => b - a),
    )
    assert.deepEqual(await idsOf(c, { pageSize: 100 }), await idsOf(c, { pageSize: 100 }))
    // An update does not move a material: the order is by creation.
    await c.admin('PATCH', `/admin/materials/${ids[0]}`, { name: 'renamed' })
    assert.deepEqual(await idsOf(c, { pageSize: 100 }), pages)
  })

  test('answers a GET with query parameters like the POST', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const cat = await category(c, 'c', null)
    await material(c, { name: 'in c', categoryId: cat })
    await material(c, { name: 'elsewhere' })

    const get = await c.request('GET', `/materials?categoryId=${cat}&keyword=in&page=1&pageSize=5`)
    const post = await c.search({ categoryId: cat, keyword: 'in', page: 1, pageSize: 5 })
    assert.equal(get.status, 200)
    assert.deepEqual(get.body, post.body)
    const repeated = await c.request('GET', '/materials?page=1&page=2')
    assert.equal(repeated.status, 400)
    assert.equal(repeated.body.error.code, 'UE_VALIDATION_FAILED')
  })

  test('treats an empty POST body without a Content-Type as no filter', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    await material(c, { name: 'a' })
    const res = await fetch(c.url('/materials'), { method: 'POST' })
    assert.equal(res.status, 200)
    assert.deepEqual(
      { ...(await res.json()), items: undefined },
      { items: undefined, total: 1, page: 1, pageSize: 20 },
    )
  })
})

describe('routing', () => {
  test('answers a JSON 404 for an unknown path and a 405 with Allow for a wrong method', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const missing = await c.request('GET', '/nope')
    assert.equal(missing.status, 404)
    assert.equal(missing.body.error.code, 'UE_NOT_FOUND')
    assert.equal(typeof missing.body.error.message, 'string')

    const wrong = await c.request('DELETE', '/categories')
    assert.equal(wrong.status, 405)
    assert.equal(wrong.headers.get('allow'), 'GET, HEAD')
    assert.equal(wrong.body.error.code, 'UE_METHOD_NOT_ALLOWED')
  })

  test('serves the API under routes.materials', async (t) => {
    const srv = await startMaterialsServer(t, { routes: { materials: '/api/designer' } })
    const moved = await fetch(`${srv.url}/api/designer/categories`)
    assert.equal(moved.status, 200)
    assert.deepEqual(await moved.json(), [])
    assert.equal((await fetch(`${srv.url}/materials/categories`)).status, 404)
    assert.equal((await fetch(`${srv.url}/api/designer/x/categories`)).status, 404)
  })

  test('is not served when materials.enabled is false', async (t) => {
    const srv = await startMaterialsServer(t, { materials: { enabled: false } })
    const res = await fetch(`${srv.url}/materials/categories`)
    assert.equal(res.status, 404)
  })
})

describe('database failures', () => {
  test('answer 500 UE_INDEX_FAILED without internals, and are logged for the operator', async (t) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ueditor-materials-db-'))
    t.after(() => rm(dataDir, { recursive: true, force: true }))
    const errors: string[] = []
    const logger: Logger = {
      debug() {},
      info() {},
      warn() {},
      error: (_o, msg) => errors.push(msg ?? ''),
    }
    const srv = await startServer({
      env: {},
      logger,
      config: {
        dataDir,
        auth: { mode: 'none' },
        materials: { seed: false },
        http: { port: 0, host: '127.0.0.1', shutdownGraceMs: 1_000 },
      },
    })
    t.after(() => srv.close())
    const c = materialsClient(`${srv.url}/materials`)
    assert.equal((await c.search({})).status, 200)

    // Someone breaks the database under the running server.
    const { index } = srv.ue.config
    assert.ok(index.driver === 'sqlite')
    const raw = await rawSqlite(index.file)
    // A search without keyword reads the term counts alone, so both tables go.
    raw.exec('DROP TABLE materials; DROP TABLE material_term_counts')
    raw.close()

    const res = await c.search({})
    assert.equal(res.status, 500)
    assert.equal(res.body.error.code, 'UE_INDEX_FAILED')
    assert.doesNotMatch(res.body.error.message, /sqlite|no such table|SELECT/i)
    assert.equal(errors.length, 1, errors.join('\n'))
    assert.match(errors[0] ?? '', /materials/)
    assert.equal((await c.categories()).status, 200)
  })
})

describe('CORS', () => {
  const origin = 'https://cms.example'

  test('answers preflights from allowed origins with Authorization, Content-Type and the write methods', async (t) => {
    const { materials: c } = await startMaterialsServer(t, { http: { corsOrigins: [origin] } })
    const res = await fetch(c.url('/admin/materials/1'), {
      method: 'OPTIONS',
      headers: {
        Origin: origin,
        'Access-Control-Request-Method': 'DELETE',
        'Access-Control-Request-Headers': 'authorization,content-type',
      },
    })
    assert.equal(res.status, 204)
    assert.equal(res.headers.get('access-control-allow-origin'), origin)
    const allowed = res.headers.get('access-control-allow-headers') ?? ''
    assert.match(allowed, /Authorization/)
    assert.match(allowed, /Content-Type/)
    for (const m of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])
      assert.ok(res.headers.get('access-control-allow-methods')?.includes(m), m)
    assert.equal(res.headers.get('access-control-allow-credentials'), null)
  })

  test('echoes only exact allowed origins on answers', async (t) => {
    const { materials: c } = await startMaterialsServer(t, { http: { corsOrigins: [origin] } })
    const ok = await c.request('GET', '/categories', undefined, { Origin: origin })
    const evil = await c.request('GET', '/categories', undefined, { Origin: 'https://evil.test' })
    assert.equal(ok.headers.get('access-control-allow-origin'), origin)
    assert.equal(evil.headers.get('access-control-allow-origin'), null)
    assert.match(evil.headers.get('vary') ?? '', /Origin/)
    const preflight = await fetch(c.url('/materials'), {
      method: 'OPTIONS',
      headers: { Origin: 'https://evil.test', 'Access-Control-Request-Method': 'POST' },
    })
    assert.equal(preflight.headers.get('access-control-allow-origin'), null)
  })
})
