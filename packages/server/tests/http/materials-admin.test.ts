import assert from 'node:assert/strict'
import {
  ADMIN_TOKEN,
  adminCreate,
  type MaterialsClient,
  startMaterialsServer,
} from '../helpers/materials.js'
import { describe, test } from '../helpers/test.js'

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

async function cat(c: MaterialsClient, name: string, parentId: number | null = null) {
  return (await adminCreate(c, 'categories', { name, parentId })).id as number
}

async function mat(c: MaterialsClient, name: string, categoryId: number | null = null) {
  return (await adminCreate(c, 'materials', { name, content: `<p>${name}</p>`, categoryId }))
    .id as number
}

/** The tree as [name, [children]] pairs, for compact assertions. */
async function shape(c: MaterialsClient): Promise<unknown[]> {
  type Node = { name: string; children: Node[] }
  const walk = (nodes: Node[]): unknown[] => nodes.map((n) => [n.name, walk(n.children)])
  return walk((await c.categories()).body)
}

async function materialCategories(c: MaterialsClient): Promise<Record<string, number | null>> {
  const items = (await c.search({ pageSize: 100 })).body.items as {
    name: string
    categoryId: number | null
  }[]
  return Object.fromEntries(items.map((m) => [m.name, m.categoryId]))
}

function expectInvalid(res: { status: number; body: { error: { code: string } } }, what: string) {
  assert.equal(res.status, 400, `${what}: ${JSON.stringify(res.body)}`)
  assert.equal(res.body.error.code, 'UE_VALIDATION_FAILED', what)
}

describe('admin categories', () => {
  test('creates a category with defaults and answers it with timestamps', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const res = await c.admin('POST', '/admin/categories', { name: '  标题  ' })
    assert.equal(res.status, 201)
    assert.deepEqual(res.body, {
      id: res.body.id,
      name: '标题',
      parentId: null,
      order: 0,
      createdAt: res.body.createdAt,
      updatedAt: res.body.updatedAt,
    })
    assert.equal(typeof res.body.id, 'number')
    assert.match(res.body.createdAt, ISO)
    const got = await c.admin('GET', `/admin/categories/${res.body.id}`)
    assert.equal(got.status, 200)
    assert.deepEqual(got.body, res.body)
  })

  test('answers 404 for a category that does not exist or an id that is not one', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    for (const id of ['999', 'abc', '0', '-1', '1.5', '99999999999']) {
      const res = await c.admin('GET', `/admin/categories/${id}`)
      assert.equal(res.status, 404, id)
      assert.equal(res.body.error.code, 'UE_NOT_FOUND')
    }
    assert.equal((await c.admin('PATCH', '/admin/categories/999', { name: 'x' })).status, 404)
    assert.equal((await c.admin('DELETE', '/admin/categories/999')).status, 404)
  })

  test('PUT replaces a category, or creates it with the given id', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const created = await c.admin('PUT', '/admin/categories/42', { name: 'Cards', order: 3 })
    assert.equal(created.status, 201)
    assert.equal(created.body.id, 42)
    const replaced = await c.admin('PUT', '/admin/categories/42', { name: 'Cards 2' })
    assert.equal(replaced.status, 200)
    assert.deepEqual([replaced.body.name, replaced.body.order], ['Cards 2', 0])
    assert.equal(replaced.body.createdAt, created.body.createdAt)
    assert.deepEqual(await shape(c), [['Cards 2', []]])
  })

  test('PATCH changes only the fields given', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const parent = await cat(c, 'parent')
    const child = await cat(c, 'child', parent)
    const res = await c.admin('PATCH', `/admin/categories/${child}`, { order: 7 })
    assert.equal(res.status, 200)
    assert.deepEqual([res.body.name, res.body.parentId, res.body.order], ['child', parent, 7])
    const moved = await c.admin('PATCH', `/admin/categories/${child}`, { parentId: 0 })
    assert.equal(moved.body.parentId, null)
    assert.deepEqual(await shape(c), [
      ['parent', []],
      ['child', []],
    ])
  })

  test('refuses invalid bodies with 400 UE_VALIDATION_FAILED and changes nothing', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const a = await cat(c, 'a')
    const b = await cat(c, 'b', a)
    const cases: [string, string, unknown][] = [
      ['no name', 'POST', {}],
      ['empty name', 'POST', { name: '   ' }],
      ['long name', 'POST', { name: 'x'.repeat(101) }],
      ['control character', 'POST', { name: 'a\u0000b' }],
      ['name as a number', 'POST', { name: 5 }],
      ['unknown key', 'POST', { name: 'x', parent_id: a }],
      ['missing parent', 'POST', { name: 'x', parentId: 404 }],
      ['string parent', 'POST', { name: 'x', parentId: String(a) }],
      ['fractional order', 'POST', { name: 'x', order: 1.5 }],
      ['an array body', 'POST', [{ name: 'x' }]],
    ]
    for (const [what, method, body] of cases)
      expectInvalid(await c.admin(method, '/admin/categories', body), what)
    expectInvalid(await c.admin('PATCH', `/admin/categories/${a}`, { parentId: a }), 'own parent')
    expectInvalid(await c.admin('PATCH', `/admin/categories/${a}`, { parentId: b }), 'loop')
    expectInvalid(
      await c.admin('PUT', `/admin/categories/${a}`, { name: 'a', parentId: b }),
      'loop',
    )
    assert.deepEqual(await shape(c), [['a', [['b', []]]]])
  })

  test('refuses nesting deeper than 8 levels', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    let parent: number | null = null
    for (let level = 1; level <= 8; level++) parent = await cat(c, `level ${level}`, parent)
    expectInvalid(
      await c.admin('POST', '/admin/categories', { name: 'level 9', parentId: parent }),
      'ninth level',
    )
    const top = await cat(c, 'other top')
    const second = await cat(c, 'other second', top)
    const firstLevel = (await c.categories()).body[0].id
    expectInvalid(
      await c.admin('PATCH', `/admin/categories/${firstLevel}`, { parentId: second }),
      'subtree moved too deep',
    )
  })

  test('refuses to delete a category with subcategories or materials, with 409 UE_CONFLICT', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const withChild = await cat(c, 'with child')
    await cat(c, 'child', withChild)
    const withMaterial = await cat(c, 'with material')
    await mat(c, 'm', withMaterial)
    const empty = await cat(c, 'empty')

    for (const id of [withChild, withMaterial]) {
      const res = await c.admin('DELETE', `/admin/categories/${id}`)
      assert.equal(res.status, 409)
      assert.equal(res.body.error.code, 'UE_CONFLICT')
      assert.match(res.body.error.message, /cascade=true or moveTo=/)
    }
    const res = await c.admin('DELETE', `/admin/categories/${empty}`)
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, {
      deleted: { categories: 1, materials: 0 },
      moved: { categories: 0, materials: 0 },
    })
    assert.deepEqual(await shape(c), [
      ['with child', [['child', []]]],
      ['with material', []],
    ])
    assert.deepEqual(await materialCategories(c), { m: withMaterial })
  })

  test('deletes a category with everything below it when asked to cascade', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const top = await cat(c, 'top')
    const mid = await cat(c, 'mid', top)
    const low = await cat(c, 'low', mid)
    const keep = await cat(c, 'keep')
    await mat(c, 'in top', top)
    await mat(c, 'in low', low)
    await mat(c, 'kept', keep)
    await mat(c, 'loose')

    const res = await c.admin('DELETE', `/admin/categories/${top}?cascade=true`)
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, {
      deleted: { categories: 3, materials: 2 },
      moved: { categories: 0, materials: 0 },
    })
    assert.deepEqual(await shape(c), [['keep', []]])
    assert.deepEqual(await materialCategories(c), { kept: keep, loose: null })
  })

  test('moves children and materials to another category, or to the top with moveTo=0', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const old = await cat(c, 'old')
    const child = await cat(c, 'child', old)
    await cat(c, 'grandchild', child)
    const target = await cat(c, 'target')
    await mat(c, 'in old', old)
    await mat(c, 'in child', child)

    const res = await c.admin('DELETE', `/admin/categories/${old}?moveTo=${target}`)
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, {
      deleted: { categories: 1, materials: 0 },
      moved: { categories: 1, materials: 1 },
    })
    assert.deepEqual(await shape(c), [['target', [['child', [['grandchild', []]]]]]])
    assert.deepEqual(await materialCategories(c), { 'in old': target, 'in child': child })

    const toTop = await c.admin('DELETE', `/admin/categories/${target}?moveTo=0`)
    assert.equal(toTop.status, 200)
    assert.deepEqual(await shape(c), [['child', [['grandchild', []]]]])
    assert.deepEqual(await materialCategories(c), { 'in old': null, 'in child': child })
  })

  test('refuses a move into the deleted subtree, to a missing category, or mixed with cascade', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const top = await cat(c, 'top')
    const child = await cat(c, 'child', top)
    for (const query of [
      `moveTo=${top}`,
      `moveTo=${child}`,
      'moveTo=404',
      'moveTo=abc',
      `moveTo=${child}&cascade=true`,
      'cascade=maybe',
    ])
      expectInvalid(await c.admin('DELETE', `/admin/categories/${top}?${query}`), query)
    assert.deepEqual(await shape(c), [['top', [['child', []]]]])
  })

  test('refuses a move that would nest the moved subcategories deeper than 8 levels', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const chain: number[] = []
    for (let level = 1; level <= 7; level++)
      chain.push(await cat(c, `level ${level}`, chain.at(-1) ?? null))
    const old = await cat(c, 'old')
    const child = await cat(c, 'child', old)
    await cat(c, 'grandchild', child)

    // child and grandchild would sit at levels 8 and 9 under level 7.
    expectInvalid(
      await c.admin('DELETE', `/admin/categories/${old}?moveTo=${chain[6]}`),
      'too deep',
    )
    assert.equal((await c.admin('GET', `/admin/categories/${old}`)).status, 200)
    const res = await c.admin('DELETE', `/admin/categories/${old}?moveTo=${chain[5]}`)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(res.body.moved, { categories: 1, materials: 0 })
    assert.equal((await c.admin('GET', `/admin/categories/${child}`)).body.parentId, chain[5])
  })
})

describe('admin materials', () => {
  test('creates a material with defaults and sanitised content', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const category = await cat(c, 'c')
    const res = await c.admin('POST', '/admin/materials', {
      name: 'Card',
      content: '<section style="color:#333" onclick="alert(1)">hi<script>x()</script></section>',
      categoryId: category,
    })
    assert.equal(res.status, 201)
    assert.deepEqual(res.body, {
      id: res.body.id,
      name: 'Card',
      content: '<section style="color:#333">hi</section>',
      categoryId: category,
      thumbnail: null,
      tags: [],
      custom: {},
      createdAt: res.body.createdAt,
      updatedAt: res.body.updatedAt,
    })
    const got = await c.admin('GET', `/admin/materials/${res.body.id}`)
    assert.deepEqual(got.body, res.body)
  })

  test('PUT replaces a material or creates it with the given id; PATCH changes only what is given', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const category = await cat(c, 'c')
    const created = await c.admin('PUT', '/admin/materials/77', {
      name: 'first',
      content: '<p>1</p>',
      tags: ['a', 'b', 'a'],
      custom: { author: 'x', level: 1 },
      thumbnail: '/img/t.png',
    })
    assert.equal(created.status, 201)
    assert.equal(created.body.id, 77)
    assert.deepEqual(created.body.tags, ['a', 'b'])

    const patched = await c.admin('PATCH', '/admin/materials/77', {
      categoryId: category,
      tags: ['c'],
      content: '<p onmouseover="x()">2</p>',
    })
    assert.equal(patched.status, 200)
    assert.deepEqual(
      {
        name: patched.body.name,
        content: patched.body.content,
        categoryId: patched.body.categoryId,
        tags: patched.body.tags,
        custom: patched.body.custom,
        thumbnail: patched.body.thumbnail,
      },
      {
        name: 'first',
        content: '<p>2</p>',
        categoryId: category,
        tags: ['c'],
        custom: { author: 'x', level: 1 },
        thumbnail: '/img/t.png',
      },
    )
    assert.equal(patched.body.createdAt, created.body.createdAt)

    const replaced = await c.admin('PUT', '/admin/materials/77', { name: 'second', content: '' })
    assert.equal(replaced.status, 200)
    assert.deepEqual(
      [replaced.body.categoryId, replaced.body.tags, replaced.body.custom, replaced.body.thumbnail],
      [null, [], {}, null],
    )
    assert.equal((await c.admin('PATCH', '/admin/materials/78', { name: 'x' })).status, 404)
  })

  test('refuses invalid materials with 400 UE_VALIDATION_FAILED', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const base = { name: 'm', content: '<p>x</p>' }
    const cases: [string, unknown][] = [
      ['no content', { name: 'm' }],
      ['content not a string', { ...base, content: { html: 1 } }],
      ['missing category', { ...base, categoryId: 404 }],
      ['category as text', { ...base, categoryId: 'one' }],
      ['reserved custom field', { ...base, custom: { html: '<img>' } }],
      ['custom not an object', { ...base, custom: [1] }],
      [
        'custom too deep',
        { ...base, custom: { a: { b: { c: { d: { e: { f: { g: { h: { i: 1 } } } } } } } } } },
      ],
      ['too many tags', { ...base, tags: Array.from({ length: 31 }, (_, i) => `t${i}`) }],
      ['empty tag', { ...base, tags: [''] }],
      ['unsafe thumbnail', { ...base, thumbnail: 'javascript:alert(1)' }],
      ['unknown key', { ...base, html: '<p>' }],
    ]
    for (const [what, body] of cases)
      expectInvalid(await c.admin('POST', '/admin/materials', body), what)
    assert.equal((await c.search({})).body.total, 0)
  })

  test('deletes a material once, then answers 404', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const id = await mat(c, 'gone')
    const res = await c.admin('DELETE', `/admin/materials/${id}`)
    assert.equal(res.status, 200)
    assert.deepEqual(res.body.deleted, { categories: 0, materials: 1 })
    assert.equal((await c.admin('DELETE', `/admin/materials/${id}`)).status, 404)
    assert.equal((await c.admin('GET', `/admin/materials/${id}`)).status, 404)
  })

  test('takes only JSON bodies', async (t) => {
    const { materials: c } = await startMaterialsServer(t)
    const body = JSON.stringify({ name: 'x', content: '' })
    const asText = await c.request('POST', '/admin/materials', body, {
      Authorization: `Bearer ${ADMIN_TOKEN}`,
      'Content-Type': 'text/plain',
    })
    assert.equal(asText.status, 415)
    assert.equal(asText.body.error.code, 'UE_MEDIA_TYPE_UNSUPPORTED')
    const broken = await c.admin('POST', '/admin/materials', '{"name": "x",')
    assert.equal(broken.status, 400)
    assert.equal(broken.body.error.code, 'UE_BODY_INVALID')
    const empty = await c.admin('POST', '/admin/materials', '')
    assert.equal(empty.status, 400)
    const vendor = await c.request('POST', '/admin/materials', body, {
      Authorization: `Bearer ${ADMIN_TOKEN}`,
      'Content-Type': 'application/vnd.api+json; charset=UTF-8',
    })
    assert.equal(vendor.status, 201)
  })
})
