import assert from 'node:assert/strict'
import { createCategoryLoader, createMaterialLoaders, createStyleLoader } from '../../src/index.js'
import { describe, test } from '../helpers/test.js'
import { fakeFetch, flush, hang, json } from './fake-fetch.js'

const TREE = [
  {
    id: 1,
    name: '标题',
    parentId: null,
    order: 1,
    children: [{ id: 3, name: 'Level two', parentId: 1, order: 1, children: [] }],
  },
  { id: 2, name: 'Cards', parentId: null, order: 2, children: [] },
]

const PAGE = {
  items: [
    {
      id: 7,
      name: 'Red title',
      content: '<p>x</p>',
      categoryId: 3,
      thumbnail: '/t.png',
      tags: ['a'],
      hot: true,
    },
  ],
  total: 41,
  page: 2,
  pageSize: 10,
}

describe('rule 1: categoryLoader', () => {
  test('sends GET to the categories path and maps the tree recursively', async () => {
    const { fetch, calls } = fakeFetch(json(TREE))
    const tree = await createCategoryLoader({ baseUrl: 'https://api.example/', fetch })()
    assert.equal(calls[0]?.url, 'https://api.example/materials/categories')
    assert.equal(calls[0]?.method, 'GET')
    assert.deepEqual(tree, [
      {
        id: 1,
        title: '标题',
        sort: 1,
        _child: [{ id: 3, title: 'Level two', pid: 1, sort: 1, _child: [] }],
      },
      { id: 2, title: 'Cards', sort: 2, _child: [] },
    ])
  })

  test('folds a flat list with parentId into a tree through _child', async () => {
    const flat = [
      { id: 'b', name: 'Child', parentId: 'a', order: 1 },
      { id: 'a', name: 'Root', parentId: null, order: 1 },
      { id: 'c', name: 'Grandchild', parentId: 'b', order: 1 },
    ]
    const { fetch } = fakeFetch(json(flat))
    const tree = await createCategoryLoader({ fetch, categoriesPath: '/api/categories' })()
    assert.equal(tree.length, 1)
    assert.equal(tree[0]?.title, 'Root')
    assert.equal(tree[0]?._child?.[0]?.title, 'Child')
    assert.equal(tree[0]?._child?.[0]?.pid, 'a')
    assert.equal(tree[0]?._child?.[0]?._child?.[0]?.title, 'Grandchild')
  })
})

describe('rule 2: styleLoader', () => {
  test('POSTs {categoryId, keyword, page, pageSize} with keywords renamed to keyword', async () => {
    const { fetch, calls } = fakeFetch(json(PAGE))
    await createStyleLoader({ baseUrl: 'https://api.example', fetch })({
      categoryId: 0,
      keywords: '标题',
      page: 1,
      pageSize: 100,
    })
    assert.equal(calls[0]?.url, 'https://api.example/materials/materials')
    assert.equal(calls[0]?.method, 'POST')
    assert.equal(calls[0]?.headers['content-type'], 'application/json')
    assert.deepEqual(calls[0]?.body, { categoryId: 0, keyword: '标题', page: 1, pageSize: 100 })
  })

  test('an absent page becomes 1 and an absent pageSize becomes 20', async () => {
    const { fetch, calls } = fakeFetch(json(PAGE))
    await createStyleLoader({ fetch })()
    assert.deepEqual(calls[0]?.body, { keyword: '', page: 1, pageSize: 20 })
  })

  test('maps items to records and keeps ids, categoryId and custom fields', async () => {
    const { fetch } = fakeFetch(json(PAGE))
    const page = await createStyleLoader({ fetch })({ page: 2, pageSize: 10 })
    assert.deepEqual(page, {
      records: [
        {
          id: 7,
          title: 'Red title',
          html: '<p>x</p>',
          categoryId: 3,
          cover: '/t.png',
          tags: ['a'],
          hot: true,
        },
      ],
      total: 41,
      page: 2,
      pageSize: 10,
    })
  })

  test('an answer without page or pageSize falls back to the requested values, then to 1 and 20', async () => {
    const { fetch } = fakeFetch(json({ items: [], total: 0 }))
    const load = createStyleLoader({ fetch })
    assert.deepEqual(await load({ page: 3, pageSize: 50 }), {
      records: [],
      total: 0,
      page: 3,
      pageSize: 50,
    })
    assert.deepEqual(await load(), { records: [], total: 0, page: 1, pageSize: 20 })
  })
})

describe('rule 3: the Bearer token', () => {
  test('is sent when the getter returns one and absent when it returns nothing', async () => {
    const { fetch, calls } = fakeFetch(json(TREE))
    await createCategoryLoader({ fetch, cacheCategories: false, getToken: () => 'tok-123' })()
    await createCategoryLoader({ fetch, cacheCategories: false, getToken: () => null })()
    assert.equal(calls[0]?.headers.authorization, 'Bearer tok-123')
    assert.equal('authorization' in (calls[1]?.headers ?? {}), false)
  })

  test('is read from localStorage access_token by default, under a configurable key', async () => {
    const store: Record<string, string> = { access_token: 'from-storage', other: 'other-token' }
    const g = globalThis as { window?: unknown }
    g.window = { localStorage: { getItem: (k: string) => store[k] ?? null } }
    try {
      const { fetch, calls } = fakeFetch(json(PAGE))
      await createStyleLoader({ fetch })()
      await createStyleLoader({ fetch, tokenKey: 'other' })()
      assert.equal(calls[0]?.headers.authorization, 'Bearer from-storage')
      assert.equal(calls[1]?.headers.authorization, 'Bearer other-token')
    } finally {
      delete g.window
    }
  })
})

describe('the default token getter outside a page', () => {
  test('without a window it reads no global localStorage, and sends no token', async () => {
    const g = globalThis as { window?: unknown }
    const saved = Object.getOwnPropertyDescriptor(globalThis, 'localStorage')
    let reads = 0
    Object.defineProperty(globalThis, 'localStorage', {
      configurable: true,
      get: () => {
        reads++
        return { getItem: () => 'server-side-token' }
      },
    })
    try {
      assert.equal(g.window, undefined)
      const { fetch, calls } = fakeFetch(json(PAGE))
      await createStyleLoader({ fetch })()
      assert.equal(reads, 0)
      assert.equal('authorization' in (calls[0]?.headers ?? {}), false)
    } finally {
      if (saved) Object.defineProperty(globalThis, 'localStorage', saved)
      else delete (globalThis as { localStorage?: unknown }).localStorage
    }
  })
})

describe('rule 4: failures never reject', () => {
  for (const [what, reply] of [
    ['a network failure', new TypeError('fetch failed')],
    ['a 404', json({ error: 'x' }, 404)],
    ['a 500', json({ error: 'x' }, 500)],
    ['an unparsable body', new Response('<html>', { status: 200 })],
    ['a body of the wrong shape', json({ nope: true })],
  ] as const) {
    test(`${what} gives [] and an empty page with the requested paging`, async () => {
      const { fetch } = fakeFetch(reply)
      const options = { fetch, retries: 0 }
      assert.deepEqual(await createCategoryLoader(options)(), [])
      assert.deepEqual(await createStyleLoader(options)({ page: 4, pageSize: 30 }), {
        records: [],
        total: 0,
        page: 4,
        pageSize: 30,
      })
      assert.deepEqual(await createStyleLoader(options)(), {
        records: [],
        total: 0,
        page: 1,
        pageSize: 20,
      })
    })
  }
})

describe('rule 5: caching, abort, loading state and retry', () => {
  test('concurrent category calls share one request and later calls hit the cache', async () => {
    const { fetch, calls } = fakeFetch(json(TREE))
    const load = createCategoryLoader({ fetch })
    const [a, b] = await Promise.all([load(), load()])
    await load()
    assert.equal(calls.length, 1)
    assert.deepEqual(a, b)
  })

  test('a cached answer cannot be changed by the caller', async () => {
    const { fetch } = fakeFetch(json(TREE))
    const load = createCategoryLoader({ fetch })
    const first = await load()
    first.pop()
    assert.equal((await load()).length, 2)
  })

  test('failures are not cached', async () => {
    const { fetch, calls } = fakeFetch(json({}, 404), json(TREE))
    const load = createCategoryLoader({ fetch })
    assert.deepEqual(await load(), [])
    assert.equal((await load()).length, 2)
    assert.equal(calls.length, 2)
  })

  test('the cache expires after its TTL and invalidate() drops it at once', async (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: 0 })
    const { fetch, calls } = fakeFetch(json(TREE))
    const load = createCategoryLoader({ fetch, cacheTtl: 60_000 })
    await load()
    t.mock.timers.tick(59_999)
    await load()
    assert.equal(calls.length, 1)
    t.mock.timers.tick(1)
    await load()
    assert.equal(calls.length, 2)
    load.invalidate()
    await load()
    assert.equal(calls.length, 3)
  })

  test('a new styleLoader call aborts the one in flight, which resolves empty and never wins', async () => {
    const { fetch, calls } = fakeFetch(hang, json(PAGE))
    const load = createStyleLoader({ fetch })
    const order: string[] = []
    const first = load({ page: 1, pageSize: 100 }).then((r) => {
      order.push('first')
      return r
    })
    await flush()
    const second = load({ page: 2, pageSize: 10 }).then((r) => {
      order.push('second')
      return r
    })
    assert.deepEqual(await first, { records: [], total: 0, page: 1, pageSize: 100 })
    assert.equal((await second).records.length, 1)
    assert.deepEqual(order, ['first', 'second'])
    assert.equal(calls[0]?.signal?.aborted, true)
    assert.equal(calls.length, 2)
  })

  test('onLoadingChange turns true once and false once across overlapping calls', async () => {
    const events: boolean[] = []
    let release: (r: Response) => void = () => {}
    const { fetch } = fakeFetch(
      () =>
        new Promise<Response>((r) => {
          release = r
        }),
    )
    const { categoryLoader, styleLoader } = createMaterialLoaders({
      fetch,
      onLoadingChange: (l) => events.push(l),
    })
    const a = categoryLoader()
    await flush()
    const releaseFirst = release
    const b = styleLoader()
    await flush()
    assert.deepEqual(events, [true])
    releaseFirst(json(TREE))
    await a
    assert.deepEqual(events, [true])
    release(json(PAGE))
    await b
    assert.deepEqual(events, [true, false])
  })

  test('5xx, 429 and network errors are retried 3 times after 1 s, 2 s and 3 s', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] })
    const { fetch, calls } = fakeFetch(
      json({}, 503),
      json({}, 429),
      new TypeError('fetch failed'),
      json(PAGE),
    )
    const result = createStyleLoader({ fetch })({ page: 2, pageSize: 10 })
    await flush()
    assert.equal(calls.length, 1)
    for (const [wait, expected] of [
      [1000, 2],
      [2000, 3],
      [3000, 4],
    ] as const) {
      t.mock.timers.tick(wait - 1)
      await flush()
      assert.equal(calls.length, expected - 1, `before ${wait} ms`)
      t.mock.timers.tick(1)
      await flush()
      assert.equal(calls.length, expected, `after ${wait} ms`)
    }
    assert.equal((await result).records.length, 1)
  })

  test('after the last retry fails the loader gives the empty result', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] })
    const { fetch, calls } = fakeFetch(json({}, 502))
    const result = createCategoryLoader({ fetch })()
    for (let i = 1; i <= 3; i++) {
      await flush()
      t.mock.timers.tick(i * 1000)
    }
    assert.deepEqual(await result, [])
    assert.equal(calls.length, 4)
  })

  test('a timed-out attempt is retried', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] })
    const { fetch, calls } = fakeFetch(hang, json(TREE))
    const result = createCategoryLoader({ fetch, timeout: 5000 })()
    await flush()
    t.mock.timers.tick(5000)
    await flush()
    t.mock.timers.tick(1000)
    assert.equal((await result).length, 2)
    assert.equal(calls.length, 2)
  })

  test('a 4xx other than 429 is final', async () => {
    const { fetch, calls } = fakeFetch(json({}, 401))
    assert.deepEqual(await createCategoryLoader({ fetch })(), [])
    assert.equal(calls.length, 1)
  })

  test('an aborted call is never retried', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] })
    const { fetch, calls } = fakeFetch(json({}, 503), json(PAGE))
    const load = createStyleLoader({ fetch })
    const first = load({ page: 1 })
    await flush()
    const second = load({ page: 2 })
    assert.deepEqual((await first).records, [])
    await flush()
    t.mock.timers.tick(10_000)
    await second
    // One call for the first (aborted while waiting to retry), one for the second.
    assert.equal(calls.length, 2)
  })

  test('retries and the delay are configurable', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] })
    const { fetch, calls } = fakeFetch(json({}, 500))
    const result = createCategoryLoader({ fetch, retries: 1, retryDelay: (n) => n * 10 })()
    await flush()
    t.mock.timers.tick(10)
    assert.deepEqual(await result, [])
    assert.equal(calls.length, 2)
  })
})
