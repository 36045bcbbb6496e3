import assert from 'node:assert/strict'
import type {
  MaterialInput,
  MaterialRecord,
  MaterialRepository,
} from '../../src/db/material-repo.js'
import type { MetadataStore } from '../../src/db/types.js'
import { isUeError } from '../../src/shared/errors.js'
import { describe, type TestContext, test } from '../helpers/test.js'

/**
 * The behaviour every dialect of the materials repository must show. `open` must return a store
 * over an empty database each time it is called; the suite migrates and closes it.
 */
export function materialRepositoryContract(name: string, open: () => Promise<MetadataStore>) {
  async function fresh(t: TestContext): Promise<MaterialRepository> {
    const store = await open()
    t.after(() => store.close())
    await store.migrate()
    return store.materials
  }

  let n = 0
  function material(over: Partial<MaterialInput> = {}): MaterialInput {
    n++
    return {
      name: `material ${n}`,
      content: `<p>${n}</p>`,
      categoryId: null,
      thumbnail: null,
      tags: [],
      custom: {},
      ...over,
    }
  }

  async function namesOf(repo: MaterialRepository, keyword: string, categoryIds?: number[]) {
    const page = await repo.search({ keyword, categoryIds, page: 1, pageSize: 100 })
    return page.items.map((m) => m.name).sort()
  }

  describe(`MaterialRepository contract: ${name}`, () => {
    test('starts with no categories and no materials', async (t) => {
      const repo = await fresh(t)
      assert.deepEqual(await repo.categories(), [])
      assert.deepEqual(await repo.search({ page: 1, pageSize: 20 }), { items: [], total: 0 })
      assert.deepEqual(await repo.allMaterials(), [])
    })

    test('gives a new category an id and keeps an explicit one', async (t) => {
      const repo = await fresh(t)
      const before = Date.now()
      const a = await repo.saveCategory({ name: '标题', parentId: null, order: 0 })
      const b = await repo.saveCategory({ id: 40, name: 'Cards', parentId: a.id, order: 2 })

      assert.ok(Number.isInteger(a.id) && a.id > 0)
      assert.ok(a.createdAt >= before && a.updatedAt >= a.createdAt)
      assert.deepEqual(b, {
        id: 40,
        name: 'Cards',
        parentId: a.id,
        order: 2,
        createdAt: b.createdAt,
        updatedAt: b.updatedAt,
      })
      assert.deepEqual(await repo.getCategory(40), b)
      assert.equal(await repo.getCategory(41), null)
    })

    test('replaces a category saved again under its id and keeps its createdAt', async (t) => {
      const repo = await fresh(t)
      const first = await repo.saveCategory({
        id: 7,
        name: 'old',
        parentId: null,
        order: 0,
        createdAt: 1000,
        updatedAt: 1000,
      })
      const second = await repo.saveCategory({ id: 7, name: 'new', parentId: null, order: 5 })

      assert.equal(first.createdAt, 1000)
      assert.equal(second.createdAt, 1000)
      assert.ok(second.updatedAt > 1000)
      assert.deepEqual(
        (await repo.categories()).map((c) => [c.id, c.name, c.order]),
        [[7, 'new', 5]],
      )
    })

    test('saves many categories at once, keeping a createdAt given and replacing by id', async (t) => {
      const repo = await fresh(t)
      await repo.saveCategory({ id: 3, name: 'old', parentId: null, order: 0, createdAt: 500 })
      await repo.saveCategories([
        { id: 11, name: 'parent', parentId: null, order: 0, createdAt: 1000, updatedAt: 1000 },
        { id: 3, name: 'renamed', parentId: null, order: 2 },
      ])
      await repo.saveCategories([
        { id: 12, name: 'child', parentId: 11, order: 1 },
        { id: 13, name: 'child of renamed', parentId: 3, order: 1 },
      ])
      const saved = await repo.categories()
      assert.deepEqual(
        saved.map((c) => [c.id, c.name, c.parentId, c.order]),
        [
          [11, 'parent', null, 0],
          [12, 'child', 11, 1],
          [13, 'child of renamed', 3, 1],
          [3, 'renamed', null, 2],
        ],
      )
      assert.equal(saved.find((c) => c.id === 11)?.createdAt, 1000)
      assert.equal(saved.find((c) => c.id === 3)?.createdAt, 500)
      const next = await repo.saveCategory({ name: 'fresh', parentId: null, order: 3 })
      assert.ok(next.id > 13, 'a later category without an id gets one past those saved')
    })

    // Import and PUT save explicit ids; a later save without one must still get a fresh id
    // (PostgreSQL: the identity sequence has to be moved past the explicit ids).
    test('gives a row saved without an id a fresh id, never replacing one saved with an id', async (t) => {
      const repo = await fresh(t)
      const top = await repo.saveCategory({ id: 1, name: 'explicit', parentId: null, order: 0 })
      const fixed = await repo.saveMaterial(material({ id: 1, name: 'explicit' }))
      const category = await repo.saveCategory({ name: 'generated', parentId: null, order: 0 })
      const generated = await repo.saveMaterial(material({ name: 'generated' }))

      assert.notEqual(category.id, top.id)
      assert.notEqual(generated.id, fixed.id)
      assert.deepEqual(await repo.getCategory(top.id), top)
      assert.deepEqual(await repo.getMaterial(fixed.id), fixed)
      assert.equal((await repo.categories()).length, 2)
      assert.equal((await repo.allMaterials()).length, 2)
    })

    test('lists categories flat, ordered by order and then id', async (t) => {
      const repo = await fresh(t)
      await repo.saveCategory({ id: 5, name: 'e', parentId: null, order: 2 })
      await repo.saveCategory({ id: 3, name: 'c', parentId: null, order: 1 })
      await repo.saveCategory({ id: 4, name: 'd', parentId: 3, order: 1 })
      await repo.saveCategory({ id: 1, name: 'a', parentId: null, order: 2 })
      await repo.saveCategory({ id: 2, name: 'b', parentId: 3, order: -1 })

      assert.deepEqual(
        (await repo.categories()).map((c) => c.id),
        [2, 3, 4, 1, 5],
      )
    })

    test('stores a material with its tags and custom fields as given', async (t) => {
      const repo = await fresh(t)
      const category = await repo.saveCategory({ name: '卡片', parentId: null, order: 0 })
      const input = material({
        name: '提示卡片',
        content: '<section style="color:#333">你好</section>',
        categoryId: category.id,
        thumbnail: 'https://cdn.example/t.png',
        tags: ['卡片', 'tip'],
        custom: { author: '林', views: 12, meta: { vip: true, list: [1, 'two'] } },
      })
      const saved = await repo.saveMaterial(input)

      assert.deepEqual(saved, {
        ...input,
        id: saved.id,
        createdAt: saved.createdAt,
        updatedAt: saved.updatedAt,
      })
      assert.deepEqual(await repo.getMaterial(saved.id), saved)
      assert.equal(await repo.getMaterial(saved.id + 1), null)
    })

    test('reads custom fields back without prototype keys and with escaped text intact', async (t) => {
      const repo = await fresh(t)
      const custom = JSON.parse(
        '{"__proto__":{"polluted":1},"keep":1,"nested":{"constructor":{"x":1},"ok":2},"bell":"\\u0007"}',
      ) as Record<string, unknown>
      const saved = await repo.saveMaterial(material({ custom }))
      const read = await repo.getMaterial(saved.id)
      assert.deepEqual(read?.custom, { keep: 1, nested: { ok: 2 }, bell: '\u0007' })
      assert.equal(Object.getPrototypeOf(read?.custom), Object.prototype)
      assert.equal(({} as Record<string, unknown>).polluted, undefined)
      const plain = await repo.saveMaterial(material({ custom: { views: 3, tags: ['a'] } }))
      assert.deepEqual((await repo.getMaterial(plain.id))?.custom, { views: 3, tags: ['a'] })
    })

    test('upserts a material by id and keeps createdAt unless one is given', async (t) => {
      const repo = await fresh(t)
      const a = await repo.saveMaterial(material({ id: 9, createdAt: 500, updatedAt: 500 }))
      const b = await repo.saveMaterial(material({ id: 9, name: 'renamed' }))

      assert.equal(a.id, 9)
      assert.equal(b.createdAt, 500)
      assert.equal(b.name, 'renamed')
      assert.equal((await repo.allMaterials()).length, 1)
    })

    test('saves a batch as saving each material in turn would: new rows, replaced rows keeping or bringing createdAt, their searches and counts', async (t) => {
      const began = Date.now()
      const inTurn = await fresh(t)
      const batched = await fresh(t)
      const homes: number[] = []
      for (const repo of [inTurn, batched]) {
        const top = await repo.saveCategory({ name: 'top', parentId: null, order: 0 })
        const child = await repo.saveCategory({ name: 'child', parentId: top.id, order: 0 })
        homes.splice(0, 2, top.id, child.id)
        for (let id = 1; id <= 6; id++)
          await repo.saveMaterial(
            material({
              id,
              name: `标题 ${id}`,
              content: `<p>${id}</p>`,
              tags: ['卡片'],
              categoryId: homes[id % 2] ?? null,
              createdAt: 1000 + id,
            }),
          )
      }
      const changes: MaterialInput[] = [
        material({ id: 2, name: '副标题 moved', tags: ['引用'], categoryId: homes[0] ?? null }),
        material({ id: 3, name: '大标题', tags: [], createdAt: 5000, updatedAt: 5000 }),
        material({ id: 10, name: '标 ten', tags: ['题'], categoryId: homes[1] ?? null }),
        // A batch gives new rows their ids after the ids it was given, as this order does.
        material({
          name: '新的 标题',
          tags: ['样式'],
          categoryId: homes[0] ?? null,
          createdAt: 3000,
        }),
        material({ name: 'plain', createdAt: 3001 }),
      ]
      for (const m of changes) await inTurn.saveMaterial(m)
      const ids = await batched.saveMaterials(changes)
      assert.deepEqual(
        [...ids].sort((a, b) => a - b),
        [2, 3, 10, 11, 12],
      )

      // Saved at slightly different moments: `updatedAt`, and the `createdAt` of the row made
      // by an id without one, are compared apart.
      const rows = async (repo: MaterialRepository) =>
        (await repo.allMaterials()).map(({ updatedAt, createdAt, ...rest }) => ({
          ...rest,
          createdAt: rest.id === 10 ? 'now' : createdAt,
        }))
      assert.deepEqual(await rows(batched), await rows(inTurn))
      assert.ok(((await batched.getMaterial(10))?.createdAt ?? 0) >= began)
      assert.equal((await batched.getMaterial(3))?.updatedAt, 5000)
      assert.equal((await batched.getMaterial(2))?.createdAt, 1002)
      for (const keyword of ['', '标', '题', '标题', '卡片', '样式', '引用', 'ten', '大标题'])
        for (const categoryIds of [undefined, [homes[0] ?? 0], [homes[1] ?? 0]]) {
          const q = { keyword, categoryIds, page: 1, pageSize: 100 }
          const expected = await inTurn.search(q)
          const found = await batched.search(q)
          assert.equal(found.total, expected.total, `total of ${keyword} in ${categoryIds}`)
          assert.deepEqual(
            found.items.map((m) => m.id),
            expected.items.map((m) => m.id),
            `${keyword} in ${categoryIds}`,
          )
        }
      await assert.rejects(batched.saveMaterials([material({ id: 4 }), material({ id: 4 })]))
      assert.equal((await batched.getMaterial(4))?.name, '标题 4')
      assert.deepEqual(
        (await batched.getMaterials([10, 99, 1])).map((m) => m.id),
        [1, 10],
      )
    })

    test('a batch of more than 500 saves gives its new rows ids after every id it was given, whatever their order', async (t) => {
      const repo = await fresh(t)
      const news = Array.from({ length: 500 }, (_, i) => material({ name: `新 ${i}` }))
      const ids = await repo.saveMaterials([...news, material({ id: 10, name: 'given ten' })])
      assert.equal(new Set(ids).size, 501)
      assert.equal((await repo.allMaterials()).length, 501)
      assert.equal((await repo.getMaterial(10))?.name, 'given ten')
      assert.ok(ids.filter((id) => id !== 10).every((id) => id > 10))
    })

    test('searches newest first, ties broken by the higher id, with paging', async (t) => {
      const repo = await fresh(t)
      const a = await repo.saveMaterial(material({ createdAt: 1000 }))
      const b = await repo.saveMaterial(material({ createdAt: 3000 }))
      const c = await repo.saveMaterial(material({ createdAt: 2000 }))
      const d = await repo.saveMaterial(material({ createdAt: 2000 }))
      const e = await repo.saveMaterial(material({ createdAt: 2000 }))

      const page1 = await repo.search({ page: 1, pageSize: 2 })
      const page2 = await repo.search({ page: 2, pageSize: 2 })
      const page3 = await repo.search({ page: 3, pageSize: 2 })
      const page4 = await repo.search({ page: 4, pageSize: 2 })

      assert.deepEqual(
        [...page1.items, ...page2.items, ...page3.items].map((m) => m.id),
        [b.id, e.id, d.id, c.id, a.id],
      )
      assert.deepEqual([page1.total, page2.total, page3.total], [5, 5, 5])
      assert.deepEqual(page4, { items: [], total: 5 })
    })

    test('filters by category ids; no filter includes uncategorised materials', async (t) => {
      const repo = await fresh(t)
      const x = await repo.saveCategory({ name: 'x', parentId: null, order: 0 })
      const y = await repo.saveCategory({ name: 'y', parentId: null, order: 0 })
      await repo.saveMaterial(material({ name: 'in x', categoryId: x.id }))
      await repo.saveMaterial(material({ name: 'in y', categoryId: y.id }))
      await repo.saveMaterial(material({ name: 'loose', categoryId: null }))

      assert.deepEqual(await namesOf(repo, '', [x.id]), ['in x'])
      assert.deepEqual(await namesOf(repo, '', [x.id, y.id]), ['in x', 'in y'])
      assert.deepEqual(await namesOf(repo, '', []), [])
      assert.deepEqual(await namesOf(repo, ''), ['in x', 'in y', 'loose'])
    })

    test('matches the keyword as a literal substring of the name or a tag, CJK included', async (t) => {
      const repo = await fresh(t)
      await repo.saveMaterial(material({ name: '本期导读 Title', tags: ['标题'] }))
      await repo.saveMaterial(material({ name: 'Quote box', tags: ['引用', 'pull quote'] }))
      await repo.saveMaterial(material({ name: '100% pure', tags: ['a_b'] }))
      await repo.saveMaterial(material({ name: 'back\\slash', tags: [] }))
      await repo.saveMaterial(material({ name: 'plain', tags: ['x"y'] }))

      assert.deepEqual(await namesOf(repo, '导读'), ['本期导读 Title'])
      assert.deepEqual(await namesOf(repo, '引用'), ['Quote box'])
      assert.deepEqual(await namesOf(repo, 'QUOTE'), ['Quote box'])
      assert.deepEqual(await namesOf(repo, '%'), ['100% pure'])
      assert.deepEqual(await namesOf(repo, '_'), ['100% pure'])
      assert.deepEqual(await namesOf(repo, '%_'), [])
      assert.deepEqual(await namesOf(repo, '\\'), ['back\\slash'])
      assert.deepEqual(await namesOf(repo, '"'), ['plain'])
      assert.deepEqual(await namesOf(repo, '["'), [])
      assert.deepEqual(await namesOf(repo, 'title\n标题'), [])
    })

    test('matches an integer keyword as an exact id as well as text', async (t) => {
      const repo = await fresh(t)
      const a = await repo.saveMaterial(material({ id: 12, name: 'twelve' }))
      await repo.saveMaterial(material({ id: 3, name: 'room 12 b' }))
      await repo.saveMaterial(material({ id: 120, name: 'other' }))

      assert.deepEqual(await namesOf(repo, '12'), [a.name, 'room 12 b'].sort())
      assert.deepEqual(await namesOf(repo, '120'), ['other'])
      assert.deepEqual(await namesOf(repo, '99999999999'), [])
    })

    test('finds exactly what a literal scan finds for 1-, 2- and 3+-character keywords, before and after edits, moves and deletes', async (t) => {
      const repo = await fresh(t)
      const top = await repo.saveCategory({ name: 'top', parentId: null, order: 0 })
      const child = await repo.saveCategory({ name: 'child', parentId: top.id, order: 0 })
      const other = await repo.saveCategory({ name: 'other', parentId: null, order: 0 })
      const names = [
        '标题样式',
        '大标题 Title',
        '副标题',
        '标',
        '题目卡片',
        'A_B 100%',
        'a%b',
        'Quote 标题',
      ]
      const tagSets = [['标题'], [], ['卡片', '引用'], ['题'], ['x_y'], ['TITLE'], [], ['标', '题']]
      const homes = [top.id, child.id, other.id, null]
      for (let i = 0; i < 24; i++)
        await repo.saveMaterial(
          material({
            name: `${names[i % names.length]} ${i}`,
            tags: tagSets[(i * 5) % tagSets.length] ?? [],
            categoryId: homes[i % homes.length] ?? null,
            createdAt: 1000 + (i % 5),
          }),
        )
      const keywords = [
        '',
        '标',
        '题',
        '标题',
        '题\n',
        '样式',
        '标题样',
        '大标题 ',
        'title',
        'Ti',
        't',
        '%',
        '_',
        'a%',
        '_B',
        '卡片 ',
        '12',
        '7',
        'nothing',
      ]
      const scopes = [undefined, [top.id, child.id], [child.id], [other.id]]

      async function agrees(when: string) {
        const all = await repo.allMaterials()
        for (const keyword of keywords)
          for (const categoryIds of scopes) {
            const expected = literalScan(all, keyword, categoryIds)
            const pages = []
            for (let page = 1; page <= Math.ceil(expected.length / 4) + 1; page++) {
              const found = await repo.search({ keyword, categoryIds, page, pageSize: 4 })
              assert.equal(
                found.total,
                expected.length,
                `${when}: total of ${keyword} in ${categoryIds}`,
              )
              pages.push(...found.items.map((m) => m.id))
            }
            assert.deepEqual(
              pages,
              expected,
              `${when}: ${JSON.stringify(keyword)} in ${categoryIds}`,
            )
          }
      }

      await agrees('as saved')
      const [first, second, third] = (await repo.allMaterials()).slice(0, 3)
      assert.ok(first && second && third)
      await repo.saveMaterial({ ...first, name: '新的标题', tags: ['样式'] })
      await repo.saveMaterial({ ...second, createdAt: 9999 })
      await repo.deleteMaterial(third.id)
      await agrees('after an edit and a delete')
      await repo.moveMaterials([child.id], other.id)
      await agrees('after a move')
      await repo.deleteMaterialsIn([other.id])
      await agrees("after deleting a category's materials")
    })

    test('counts, moves and deletes the materials of categories', async (t) => {
      const repo = await fresh(t)
      const x = await repo.saveCategory({ name: 'x', parentId: null, order: 0 })
      const y = await repo.saveCategory({ name: 'y', parentId: null, order: 0 })
      await repo.saveMaterial(material({ categoryId: x.id }))
      await repo.saveMaterial(material({ categoryId: x.id }))
      const inY = await repo.saveMaterial(material({ categoryId: y.id }))

      assert.equal(await repo.countMaterials([x.id]), 2)
      assert.equal(await repo.countMaterials([x.id, y.id]), 3)
      assert.equal(await repo.countMaterials([]), 0)
      assert.equal(await repo.moveMaterials([x.id], y.id), 2)
      assert.equal(await repo.countMaterials([y.id]), 3)
      assert.equal(await repo.moveMaterials([y.id], null), 3)
      assert.equal((await repo.getMaterial(inY.id))?.categoryId, null)
      await repo.moveMaterials([], x.id)
      await repo.saveMaterial(material({ categoryId: x.id }))
      assert.equal(await repo.deleteMaterialsIn([x.id]), 1)
      assert.equal(await repo.deleteMaterial(inY.id), true)
      assert.equal(await repo.deleteMaterial(inY.id), false)
      assert.equal((await repo.allMaterials()).length, 2)
    })

    test('moves children to another parent and deletes a subtree in one call', async (t) => {
      const repo = await fresh(t)
      const root = await repo.saveCategory({ name: 'root', parentId: null, order: 0 })
      const a = await repo.saveCategory({ name: 'a', parentId: root.id, order: 0 })
      const b = await repo.saveCategory({ name: 'b', parentId: root.id, order: 0 })
      const leaf = await repo.saveCategory({ name: 'leaf', parentId: a.id, order: 0 })

      assert.equal(await repo.moveChildren(root.id, null), 2)
      assert.equal((await repo.getCategory(a.id))?.parentId, null)
      assert.equal(await repo.deleteCategories([a.id, leaf.id]), 2)
      assert.deepEqual((await repo.categories()).map((c) => c.id).sort(), [root.id, b.id].sort())
    })

    test('refuses a material in a missing category with UE_CONFLICT', async (t) => {
      const repo = await fresh(t)
      await assert.rejects(
        repo.saveMaterial(material({ categoryId: 404 })),
        (e) => isUeError(e) && e.code === 'UE_CONFLICT',
      )
      await assert.rejects(
        repo.saveCategory({ name: 'orphan', parentId: 404, order: 0 }),
        (e) => isUeError(e) && e.code === 'UE_CONFLICT',
      )
    })

    test('rolls a transaction back when its work fails', async (t) => {
      const repo = await fresh(t)
      await assert.rejects(
        repo.transaction(async (tx) => {
          await tx.saveCategory({ name: 'kept?', parentId: null, order: 0 })
          await tx.saveMaterial(material())
          throw new Error('boom')
        }),
        /boom/,
      )
      assert.deepEqual(await repo.categories(), [])
      assert.deepEqual(await repo.allMaterials(), [])
    })
  })
}

/**
 * What the search must return, computed the slow way: newest first, and a material matches when
 * the keyword (ASCII letters folded) is a literal substring of its name or of its tags joined by
 * newlines, or is its exact id.
 */
function literalScan(
  all: readonly MaterialRecord[],
  keyword: string,
  categoryIds: readonly number[] | undefined,
): number[] {
  const fold = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase())
  const needle = fold(keyword)
  return all
    .filter(
      (m) =>
        categoryIds === undefined || (m.categoryId !== null && categoryIds.includes(m.categoryId)),
    )
    .filter(
      (m) =>
        fold(m.name).includes(needle) ||
        fold(m.tags.join('\n')).includes(needle) ||
        String(m.id) === keyword,
    )
    .sort((a, b) => b.createdAt - a.createdAt || b.id - a.id)
    .map((m) => m.id)
}
