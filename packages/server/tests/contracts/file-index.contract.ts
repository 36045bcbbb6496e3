import assert from 'node:assert/strict'
import type {
  FileEntry,
  ListQuery,
  MetadataStore,
  NewFileEntry,
  OwnerFilter,
} from '../../src/db/types.js'
import { isUeError } from '../../src/shared/errors.js'
import type { Category, StorageKey } from '../../src/shared/types.js'
import { describe, type TestContext, test } from '../helpers/test.js'

/**
 * The behaviour every dialect of the metadata index must show. `open` must return a store over
 * an empty database each time it is called; the suite migrates and closes it. `openNodes` must
 * return two stores over one new, empty database, as two app nodes sharing it would hold.
 */
export function fileIndexContract(
  name: string,
  open: () => Promise<MetadataStore>,
  openNodes: () => Promise<[MetadataStore, MetadataStore]>,
): void {
  async function fresh(t: TestContext): Promise<MetadataStore> {
    const store = await open()
    t.after(() => store.close())
    await store.migrate()
    return store
  }

  async function keysOf(store: MetadataStore, categories: readonly Category[] = ['image']) {
    const page = await store.files.list({ categories, start: 0, size: 1000 })
    return page.items.map((e) => e.key)
  }

  describe(`FileIndex contract: ${name}`, () => {
    test('adds an entry and returns it with a new id and a createdAt of now', async (t) => {
      const store = await fresh(t)
      const input = entry()
      const before = Date.now()
      const added = await store.files.add(input)
      const after = Date.now()

      assert.ok(Number.isInteger(added.id) && added.id > 0)
      assert.ok(added.createdAt >= before && added.createdAt <= after)
      assert.deepEqual(added, { ...input, id: added.id, createdAt: added.createdAt })
      assert.deepEqual(await store.files.get(input.key), added)
    })

    test('keeps an explicit createdAt and gives each entry a distinct id', async (t) => {
      const store = await fresh(t)
      const a = await store.files.add(entry({ createdAt: 1_700_000_000_000 }))
      const b = await store.files.add(entry({ createdAt: 1_700_000_000_000 }))

      assert.equal(a.createdAt, 1_700_000_000_000)
      assert.notEqual(a.id, b.id)
    })

    test('refuses a duplicate key with UE_INDEX_FAILED and leaves the count unchanged', async (t) => {
      const store = await fresh(t)
      const first = entry()
      await store.files.add(first)

      await assert.rejects(
        store.files.add(entry({ key: first.key, originalName: 'other.png' })),
        (e) => isUeError(e) && e.code === 'UE_INDEX_FAILED' && e.cause !== undefined,
      )
      const page = await store.files.list({ categories: ['image'], start: 0, size: 10 })
      assert.equal(page.total, 1)
      assert.equal(page.items[0]?.originalName, first.originalName)
    })

    test('lists the newest entry first and breaks created_at ties by id', async (t) => {
      const store = await fresh(t)
      const a = await store.files.add(entry({ createdAt: 1000 }))
      const b = await store.files.add(entry({ createdAt: 3000 }))
      const c = await store.files.add(entry({ createdAt: 2000 }))
      const d = await store.files.add(entry({ createdAt: 2000 }))
      const e = await store.files.add(entry({ createdAt: 2000 }))

      assert.deepEqual(await keysOf(store), [b.key, e.key, d.key, c.key, a.key])
    })

    test('filters by categories, and by extensions only when exts is non-empty', async (t) => {
      const store = await fresh(t)
      const png = await store.files.add(entry({ category: 'image', ext: '.png' }))
      const jpg = await store.files.add(entry({ category: 'image', ext: '.jpg' }))
      const scrawl = await store.files.add(entry({ category: 'scrawl', ext: '.png' }))
      const pdf = await store.files.add(entry({ category: 'file', ext: '.pdf' }))
      await store.files.add(entry({ category: 'video', ext: '.mp4' }))
      const list = async (categories: Category[], exts?: string[]) => {
        const page = await store.files.list({ categories, exts, start: 0, size: 100 })
        return { keys: page.items.map((x) => x.key).sort(), total: page.total }
      }
      const sorted = (...keys: StorageKey[]) => ({ keys: [...keys].sort(), total: keys.length })

      assert.deepEqual(await list(['image']), sorted(png.key, jpg.key))
      assert.deepEqual(await list(['image'], []), sorted(png.key, jpg.key))
      assert.deepEqual(await list(['image', 'scrawl'], ['.png']), sorted(png.key, scrawl.key))
      assert.deepEqual(await list(['image', 'file'], ['.pdf', '.jpg']), sorted(jpg.key, pdf.key))
      assert.deepEqual(await list(['audio']), sorted())
      assert.deepEqual(await list([]), sorted())
    })

    test('pages by start and size into disjoint consecutive slices that cover every match', async (t) => {
      const store = await fresh(t)
      for (let i = 0; i < 7; i++) await store.files.add(entry({ createdAt: 1000 + (i % 3) }))
      const all = await keysOf(store)
      const slices: StorageKey[][] = []
      for (let start = 0; start < 7; start += 3) {
        const page = await store.files.list({ categories: ['image'], start, size: 3 })
        slices.push(page.items.map((e) => e.key))
      }

      assert.deepEqual(
        slices.map((s) => s.length),
        [3, 3, 1],
      )
      assert.deepEqual(slices.flat(), all)
      assert.equal(new Set(slices.flat()).size, 7)
    })

    test('counts every match in total whatever start and size are', async (t) => {
      const store = await fresh(t)
      for (let i = 0; i < 5; i++) await store.files.add(entry())
      await store.files.add(entry({ category: 'file', ext: '.pdf' }))
      const page = (start: number, size: number) =>
        store.files.list({ categories: ['image'], start, size })

      assert.equal((await page(0, 100)).total, 5)
      assert.equal((await page(0, 1)).total, 5)
      assert.equal((await page(3, 2)).total, 5)
      assert.deepEqual(await page(0, 0), { items: [], total: 5 })
    })

    test('returns no items but the full total when start is at or beyond the last match', async (t) => {
      const store = await fresh(t)
      for (let i = 0; i < 3; i++) await store.files.add(entry())

      for (const start of [3, 4, 1000]) {
        assert.deepEqual(await store.files.list({ categories: ['image'], start, size: 10 }), {
          items: [],
          total: 3,
        })
      }
    })

    test('removes an entry once: true the first time, false afterwards', async (t) => {
      const store = await fresh(t)
      const kept = await store.files.add(entry())
      const gone = await store.files.add(entry())

      assert.equal(await store.files.remove(gone.key), true)
      assert.equal(await store.files.remove(gone.key), false)
      assert.equal(await store.files.get(gone.key), null)
      assert.deepEqual(await keysOf(store), [kept.key])
    })

    test('returns null from get for a key that was never added', async (t) => {
      const store = await fresh(t)
      await store.files.add(entry())

      assert.equal(await store.files.get('never/added.png' as StorageKey), null)
    })

    test('round-trips CJK and emoji original names unchanged', async (t) => {
      const store = await fresh(t)
      const names = [
        '年度报告 2024.pdf',
        '写真📷🎉.jpg',
        '한국어 파일.png',
        'naïve – résumé 👨‍👩‍👧.txt',
      ]
      for (const originalName of names) await store.files.add(entry({ originalName }))

      const page = await store.files.list({ categories: ['image'], start: 0, size: 10 })
      assert.deepEqual(page.items.map((e) => e.originalName).reverse(), names)
    })

    test('keeps sizes above 2^32 exact', async (t) => {
      const store = await fresh(t)
      const big = await store.files.add(entry({ size: 5 * 2 ** 32 + 7, category: 'video' }))

      assert.equal((await store.files.get(big.key))?.size, 5 * 2 ** 32 + 7)
    })

    test('runs migrate() a second time without error or data loss', async (t) => {
      const store = await fresh(t)
      const added = await store.files.add(entry())

      await store.migrate()
      assert.deepEqual(await store.files.get(added.key), added)
    })

    test('records the owner and lists one owner, every owned row, or every row', async (t) => {
      const store = await fresh(t)
      const alice = await store.files.add(entry({ owner: 'alice', createdAt: 3 }))
      const bob = await store.files.add(entry({ owner: 'bob', createdAt: 2 }))
      const legacy = await store.files.add(entry({ createdAt: 1 }))
      const list = async (owners?: OwnerFilter) =>
        (await store.files.list({ categories: ['image'], start: 0, size: 10, owners })).items.map(
          (e) => e.key,
        )

      assert.equal((await store.files.get(alice.key))?.owner, 'alice')
      assert.equal((await store.files.get(legacy.key))?.owner, null)
      assert.deepEqual(await list({ kind: 'user', user: 'alice' }), [alice.key])
      assert.deepEqual(await list({ kind: 'user', user: 'carol' }), [])
      assert.deepEqual(await list({ kind: 'owned' }), [alice.key, bob.key])
      assert.deepEqual(await list({ kind: 'all' }), [alice.key, bob.key, legacy.key])
      assert.deepEqual(await list(), [alice.key, bob.key, legacy.key])
      const page = await store.files.list({
        categories: ['image'],
        start: 0,
        size: 0,
        owners: { kind: 'user', user: 'bob' },
      })
      assert.equal(page.total, 1)
    })

    test('sums the bytes one owner has stored, exactly above 2^32, and 0 for nobody', async (t) => {
      const store = await fresh(t)
      await store.files.add(entry({ owner: 'alice', size: 100 }))
      const gone = await store.files.add(entry({ owner: 'alice', size: 5 * 2 ** 32 }))
      await store.files.add(entry({ owner: 'bob', size: 7 }))
      await store.files.add(entry({ size: 1_000 }))

      assert.equal(await store.files.usage('alice'), 5 * 2 ** 32 + 100)
      assert.equal(await store.files.usage('bob'), 7)
      assert.equal(await store.files.usage('carol'), 0)
      await store.files.remove(gone.key)
      assert.equal(await store.files.usage('alice'), 100)
    })

    test('pages every key in ascending byte order, whatever the database locale', async (t) => {
      const store = await fresh(t)
      // Locale collations put 'a-b' after 'a/b' and 'B' after 'a'; byte order does neither.
      const names = ['a/b.png', 'a-b.png', 'B.png', 'a.png', 'ab.png', 'a/c/d.png', 'Z9.png']
      for (const [i, name] of names.entries())
        await store.files.add(entry({ key: name as StorageKey, size: i, createdAt: 1000 + i }))
      const seen: { key: string; size: number; createdAt: number }[] = []
      let after: StorageKey | null = null
      for (let pages = 1; ; pages++) {
        const page = await store.files.keysAfter(after, 2)
        assert.ok(page.length <= 2)
        if (page.length === 0) break
        assert.ok(pages <= names.length, `a page after the last one: ${JSON.stringify(page)}`)
        seen.push(...page)
        after = page[page.length - 1]?.key ?? null
      }
      const expected = [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
      assert.deepEqual(
        seen.map((r) => r.key),
        expected,
      )
      const first = seen.find((r) => r.key === 'a/b.png')
      assert.deepEqual(first, { key: 'a/b.png', size: 0, createdAt: 1000 })
    })

    test('answers ping while the database is open', async (t) => {
      const store = await fresh(t)
      await store.ping()
    })

    test('pages sequentially and by jumps exactly as an offset into the full ordering, for every owner filter, category set and extension filter', async (t) => {
      const store = await fresh(t)
      const categories: Category[] = ['image', 'scrawl', 'catch', 'file']
      const exts = ['.png', '.jpg', '.gif']
      const owners = [null, 'alice', 'bob']
      const model: FileEntry[] = []
      for (let i = 0; i < 60; i++)
        model.push(
          await store.files.add(
            entry({
              category: categories[i % 4],
              ext: exts[i % 3],
              owner: owners[i % 5 === 0 ? 0 : (i % 2) + 1],
              createdAt: 5000 + Math.floor(i / 4),
            }),
          ),
        )
      const shapes: Omit<ListQuery, 'start' | 'size'>[] = [
        { categories: ['image', 'scrawl', 'catch'] },
        { categories: ['image', 'image', 'scrawl'] },
        { categories: ['image', 'scrawl', 'catch'], exts: ['.png', '.gif'] },
        { categories: ['file'], owners: { kind: 'owned' } },
        { categories: ['image', 'catch', 'file'], owners: { kind: 'user', user: 'alice' } },
        { categories: ['image', 'scrawl'], owners: { kind: 'owned' }, exts: ['.jpg'] },
      ]
      await agreesWithScan(store, model, shapes, 'as added')
      const doomed = model.filter((_, i) => i % 7 === 3)
      for (const e of doomed) await store.files.remove(e.key)
      const kept = model.filter((e) => !doomed.includes(e))
      kept.push(
        await store.files.add(entry({ category: 'image', owner: 'alice', createdAt: 5003 })),
      )
      kept.push(await store.files.add(entry({ category: 'scrawl', ext: '.gif', createdAt: 9000 })))
      await agreesWithScan(store, kept, shapes, 'after removes and adds')
    })

    test('finds every offset of files spread over many days, exactly as the full ordering, for every listing shape', async (t) => {
      const store = await fresh(t)
      const day = 86_400_000
      const categories: Category[] = ['image', 'scrawl', 'catch', 'file']
      const exts = ['.png', '.jpg', '.gif']
      const owners = [null, 'alice', 'bob']
      // Days of very different sizes, ties on a day's first and last millisecond, times before 1970.
      const times = [-5_000, -1, 0, 1, day - 1, day - 1, day, day, 3 * day + 7]
      for (let i = 0; i < 40; i++) times.push(10 * day + (i % 3) * day + i)
      for (let i = 0; i < 12; i++) times.push(20 * day - 1)
      const model: FileEntry[] = []
      for (const [i, createdAt] of times.entries())
        model.push(
          await store.files.add(
            entry({
              category: categories[i % 4],
              ext: exts[i % 3],
              owner: owners[i % 5 === 0 ? 0 : (i % 2) + 1],
              createdAt,
            }),
          ),
        )
      const shapes: Omit<ListQuery, 'start' | 'size'>[] = [
        { categories: ['image'] },
        { categories: ['image', 'scrawl', 'catch', 'file'] },
        { categories: ['image', 'scrawl'], exts: ['.png', '.gif'] },
        { categories: ['file'], owners: { kind: 'owned' } },
        { categories: ['image', 'catch', 'file'], owners: { kind: 'user', user: 'alice' } },
        { categories: ['image', 'scrawl', 'catch'], owners: { kind: 'owned' }, exts: ['.jpg'] },
        { categories: ['image', 'scrawl', 'catch', 'file'], owners: { kind: 'user', user: 'bob' } },
      ]
      await everyOffsetAgrees(store, model, shapes, 'as added')
      const doomed = model.filter((_, i) => i % 4 === 1)
      for (const e of doomed) await store.files.remove(e.key)
      const kept = model.filter((e) => !doomed.includes(e))
      kept.push(await store.files.add(entry({ category: 'image', owner: 'alice', createdAt: day })))
      kept.push(await store.files.add(entry({ category: 'file', ext: '.gif', createdAt: -3 })))
      await everyOffsetAgrees(store, kept, shapes, 'after removes and adds')
    })

    test('keeps the total and the next page exact when a file is removed or added between pages', async (t) => {
      const store = await fresh(t)
      for (let i = 0; i < 9; i++) await store.files.add(entry({ createdAt: 100 + i }))
      const page = (start: number) => store.files.list({ categories: ['image'], start, size: 3 })
      const first = await page(0)
      assert.equal(first.total, 9)
      await store.files.remove(first.items[0]?.key as StorageKey)
      const all = await keysOf(store)
      const second = await page(3)
      assert.equal(second.total, 8)
      assert.deepEqual(
        second.items.map((e) => e.key),
        all.slice(3, 6),
      )
      const added = await store.files.add(entry({ createdAt: 50 }))
      const last = await page(6)
      assert.equal(last.total, 9)
      assert.deepEqual(
        last.items.map((e) => e.key),
        [...all, added.key].slice(6, 9),
      )
    })

    test('answers a page read again unchanged, and shows the next read every add and remove another node made meanwhile', async (t) => {
      const [a, b] = await openNodes()
      t.after(() => Promise.all([a.close(), b.close()]))
      await a.migrate()
      const added: FileEntry[] = []
      for (let i = 0; i < 7; i++) added.push(await a.files.add(entry({ createdAt: 200 + i })))
      const newest = added.map((e) => e.key).reverse()
      const page = async (start: number) => {
        const { items, total } = await a.files.list({ categories: ['image'], start, size: 3 })
        return { keys: items.map((e) => e.key), total }
      }
      assert.deepEqual(await page(0), { keys: newest.slice(0, 3), total: 7 })
      assert.deepEqual(await page(3), { keys: newest.slice(3, 6), total: 7 })
      assert.deepEqual(await page(0), { keys: newest.slice(0, 3), total: 7 })

      const fresh = await b.files.add(entry({ createdAt: 300 }))
      assert.deepEqual(await page(0), { keys: [fresh.key, ...newest.slice(0, 2)], total: 8 })
      assert.deepEqual(await page(3), { keys: newest.slice(2, 5), total: 8 })

      await b.files.remove(fresh.key)
      await b.files.remove(newest[1] as StorageKey)
      const left = newest.filter((k) => k !== newest[1])
      assert.deepEqual(await page(0), { keys: left.slice(0, 3), total: 6 })
      assert.deepEqual(await page(3), { keys: left.slice(3, 6), total: 6 })
      // A file of another category changes nothing of this listing.
      await b.files.add(entry({ category: 'file', ext: '.pdf', createdAt: 400 }))
      assert.deepEqual(await page(0), { keys: left.slice(0, 3), total: 6 })
    })

    test('closes twice without error', async () => {
      const store = await open()
      await store.migrate()
      await store.close()
      await store.close()
    })
  })
}

let seq = 0

function entry(over: Partial<NewFileEntry> = {}): NewFileEntry {
  seq += 1
  return {
    key: `2025/01/02/upload-${seq}.png` as StorageKey,
    category: 'image',
    originalName: `photo ${seq}.png`,
    ext: '.png',
    size: 1000 + seq,
    mime: 'image/png',
    sha256: seq.toString(16).padStart(64, '0'),
    owner: null,
    ...over,
  }
}

/** The keys of `shape`, filtered and ordered here the slow way: newest first, ties by id. */
function scanned(stored: readonly FileEntry[], shape: Omit<ListQuery, 'start' | 'size'>): string[] {
  const owners = shape.owners ?? { kind: 'all' }
  return stored
    .filter((e) => shape.categories.includes(e.category))
    .filter((e) => (shape.exts ?? []).length === 0 || shape.exts?.includes(e.ext))
    .filter((e) =>
      owners.kind === 'all'
        ? true
        : owners.kind === 'owned'
          ? e.owner !== null
          : e.owner === owners.user,
    )
    .sort((a, b) => b.createdAt - a.createdAt || b.id - a.id)
    .map((e) => e.key)
}

/**
 * Reads each offset alone (size 1, from the last to the first, so no page or remembered anchor
 * answers it: the row at each offset is looked up) and compares it with the scan.
 */
async function everyOffsetAgrees(
  store: MetadataStore,
  stored: readonly FileEntry[],
  shapes: readonly Omit<ListQuery, 'start' | 'size'>[],
  when: string,
): Promise<void> {
  for (const shape of shapes) {
    const keys = scanned(stored, shape)
    for (let start = keys.length; start >= 0; start--)
      await pageAgrees(store, shape, keys, start, 1, when)
  }
}

/**
 * Compares every page (sizes 1, 4 and 7, read in order, then jumps backwards and forwards) with
 * the same slice of the scan.
 */
async function agreesWithScan(
  store: MetadataStore,
  stored: readonly FileEntry[],
  shapes: readonly Omit<ListQuery, 'start' | 'size'>[],
  when: string,
): Promise<void> {
  for (const shape of shapes) {
    const keys = scanned(stored, shape)
    for (const size of [1, 4, 7]) {
      const starts = [...Array(Math.ceil(keys.length / size) + 1).keys()].map((i) => i * size)
      // Jumps first, while no anchor is remembered: the row at the offset is looked up.
      for (const start of [keys.length - 2, 5, 2, ...starts, ...starts.reverse()])
        await pageAgrees(store, shape, keys, start, size, when)
    }
  }
}

/** The page of `shape` from `start` by `size` is that slice of the scanned `keys`. */
async function pageAgrees(
  store: MetadataStore,
  shape: Omit<ListQuery, 'start' | 'size'>,
  keys: readonly string[],
  start: number,
  size: number,
  when: string,
): Promise<void> {
  const page = await store.files.list({ ...shape, start, size })
  assert.equal(page.total, keys.length, `${when}: total of ${JSON.stringify(shape)}`)
  assert.deepEqual(
    page.items.map((e) => e.key),
    keys.slice(start, start + size),
    `${when}: ${JSON.stringify(shape)} from ${start} by ${size}`,
  )
}
