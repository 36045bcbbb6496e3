import assert from 'node:assert/strict'
import type { FileEntry, MetadataStore } from '../../src/db/types.js'
import { isUeError } from '../../src/shared/errors.js'
import type { StorageKey } from '../../src/shared/types.js'
import { describe, type TestContext, test } from '../helpers/test.js'
import { twoMigratedNodes } from './two-nodes.js'

const DAY = 86_400_000

/**
 * The behaviour every dialect of the documents repository must show. `open` returns a store over
 * an empty database each time; `openNodes` two stores over one new database, as two nodes.
 */
export function documentRepositoryContract(
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

  let n = 0
  async function stored(
    store: MetadataStore,
    o: { owner?: string | null; createdAt?: number; size?: number } = {},
  ): Promise<FileEntry> {
    n++
    return store.files.add({
      key: `2026/11/26/file-${n}.png` as StorageKey,
      category: 'image',
      originalName: `file-${n}.png`,
      ext: '.png',
      size: o.size ?? 100,
      mime: 'image/png',
      sha256: 'c'.repeat(64),
      owner: o.owner ?? 'alice',
      createdAt: o.createdAt,
    })
  }

  const alice = { user: 'alice', anyDocument: false }
  const bob = { user: 'bob', anyDocument: false }
  const service = { user: null, anyDocument: true }
  const forbidden = (e: unknown) => isUeError(e) && e.code === 'UE_FORBIDDEN'
  const orphanKeys = async (store: MetadataStore, storedBefore = Date.now() + DAY) =>
    (await store.documents.orphans({ storedBefore, limit: 100 })).map((f) => f.key)

  describe(`DocumentRepository contract: ${name}`, () => {
    test('a save keeps the indexed files among the keys given, and get answers them with the owner and times', async (t) => {
      const store = await fresh(t)
      const a = await stored(store)
      const b = await stored(store)
      const saved = await store.documents.save(
        'post-1',
        [b.key, a.key, 'never/stored.png' as StorageKey, a.key],
        { ...alice, now: 1_800_000_000_000 },
      )
      assert.deepEqual(saved, {
        id: 'post-1',
        owner: 'alice',
        createdAt: 1_800_000_000_000,
        savedAt: 1_800_000_000_000,
        keys: [a.key, b.key],
      })
      assert.deepEqual(await store.documents.get('post-1'), saved)
      assert.equal(await store.documents.get('post-2'), null)
    })

    test('saving again replaces the references and the saved time, and keeps the owner and creation time', async (t) => {
      const store = await fresh(t)
      const a = await stored(store)
      const b = await stored(store)
      await store.documents.save('post', [a.key], { ...alice, now: 1_000 })
      const again = await store.documents.save('post', [b.key], { ...service, now: 2_000 })
      assert.deepEqual(again, {
        id: 'post',
        owner: 'alice',
        createdAt: 1_000,
        savedAt: 2_000,
        keys: [b.key],
      })
      assert.deepEqual(await store.documents.get('post'), again)
    })

    test('another user can neither save nor delete a document, while a service or admin can', async (t) => {
      const store = await fresh(t)
      const a = await stored(store)
      await store.documents.save('post', [a.key], alice)
      await assert.rejects(store.documents.save('post', [], bob), forbidden)
      await assert.rejects(store.documents.remove('post', bob), forbidden)
      // A document a service created belongs to no user: only services and admins write it.
      await store.documents.save('by-service', [], service)
      await assert.rejects(store.documents.save('by-service', [], alice), forbidden)
      await assert.rejects(
        store.documents.save('post', [], { user: null, anyDocument: false }),
        forbidden,
      )
      assert.deepEqual((await store.documents.get('post'))?.keys, [a.key])
      const admin = await store.documents.save('post', [], { user: 'root', anyDocument: true })
      assert.equal(admin.owner, 'alice')
      assert.deepEqual(await store.documents.remove('post', service), admin)
      assert.equal(await store.documents.get('post'), null)
    })

    test('a delete drops the document and its references, and answers null when there is none', async (t) => {
      const store = await fresh(t)
      const a = await stored(store)
      await store.documents.startTracking()
      const b = await stored(store)
      await store.documents.save('post', [a.key, b.key], alice)
      assert.deepEqual(await orphanKeys(store), [])
      const removed = await store.documents.remove('post', alice)
      assert.deepEqual(removed?.keys, [a.key, b.key])
      assert.equal(await store.documents.get('post'), null)
      assert.equal(await store.documents.remove('post', alice), null)
      assert.deepEqual(await orphanKeys(store), [b.key])
    })

    test('the within callback runs in the transaction of a save, and its failure rolls the save back', async (t) => {
      const store = await fresh(t)
      const a = await stored(store)
      const b = await stored(store)
      await store.documents.save('post', [a.key], alice)
      let seen: unknown
      await assert.rejects(
        store.documents.save('post', [b.key], {
          ...alice,
          within: async (trx, changed) => {
            const refs = await trx.selectFrom('documentFiles').selectAll().execute()
            seen = { changed: changed.keys, refs: refs.map((r) => Number(r.fileId)) }
            throw new Error('outbox failed')
          },
        }),
        /outbox failed/,
      )
      assert.deepEqual(seen, { changed: [b.key], refs: [b.id] })
      assert.deepEqual((await store.documents.get('post'))?.keys, [a.key])
      await assert.rejects(
        store.documents.save('new', [a.key], {
          ...alice,
          within: async () => {
            throw new Error('outbox failed')
          },
        }),
      )
      assert.equal(await store.documents.get('new'), null)
    })

    test('the within callback runs in the transaction of a delete, and its failure keeps the document', async (t) => {
      const store = await fresh(t)
      const a = await stored(store)
      await store.documents.save('post', [a.key], alice)
      let inside: unknown
      await assert.rejects(
        store.documents.remove('post', {
          ...alice,
          within: async (trx, changed) => {
            const row = await trx.selectFrom('documents').selectAll().executeTakeFirst()
            inside = { gone: row === undefined, keys: changed.keys }
            throw new Error('outbox failed')
          },
        }),
        /outbox failed/,
      )
      assert.deepEqual(inside, { gone: true, keys: [a.key] })
      assert.deepEqual((await store.documents.get('post'))?.keys, [a.key])
    })

    test('tracking starts once: later starts answer the first, and files from before it are never orphans', async (t) => {
      const store = await fresh(t)
      assert.equal(await store.documents.tracking(), null)
      const old = await stored(store, { createdAt: 1_000 })
      assert.deepEqual(await orphanKeys(store), [], 'no orphans before tracking starts')
      const first = await store.documents.startTracking(5_000)
      assert.deepEqual(first, { startedAt: 5_000, lastFileBefore: old.id })
      const later = await stored(store, { createdAt: 6_000 })
      assert.deepEqual(await store.documents.startTracking(9_000), first)
      assert.deepEqual(await store.documents.tracking(), first)
      assert.deepEqual(await orphanKeys(store), [later.key])
      assert.equal(await store.documents.removeOrphan(old.key, { storedBefore: Date.now() }), null)
      assert.ok(await store.files.get(old.key))
    })

    test('an empty library starts tracking from file id zero', async (t) => {
      const store = await fresh(t)
      assert.deepEqual(await store.documents.startTracking(7), { startedAt: 7, lastFileBefore: 0 })
      const first = await stored(store)
      assert.deepEqual(await orphanKeys(store), [first.key])
    })

    test('an orphan is unreferenced and stored before the grace line; a file two documents use survives the delete of one', async (t) => {
      const store = await fresh(t)
      await store.documents.startTracking()
      const now = Date.now()
      const used = await stored(store, { createdAt: now - 10 * DAY })
      const shared = await stored(store, { createdAt: now - 10 * DAY })
      const unused = await stored(store, { createdAt: now - 10 * DAY })
      const fresh1 = await stored(store, { createdAt: now - DAY })
      await store.documents.save('a', [used.key, shared.key], alice)
      await store.documents.save('b', [shared.key], alice)
      const graceLine = now - 7 * DAY
      assert.deepEqual(await orphanKeys(store, graceLine), [unused.key])
      assert.deepEqual(await orphanKeys(store), [unused.key, fresh1.key])
      await store.documents.remove('b', alice)
      assert.deepEqual(await orphanKeys(store, graceLine), [unused.key])
      await store.documents.remove('a', alice)
      assert.deepEqual(await orphanKeys(store, graceLine), [used.key, shared.key, unused.key])
      const page = await store.documents.orphans({
        storedBefore: graceLine,
        afterId: used.id,
        limit: 1,
      })
      assert.deepEqual(
        page.map((f) => f.key),
        [shared.key],
      )
    })

    test('removing an orphan deletes its row and frees its bytes of the quota; a referenced or young file is kept', async (t) => {
      const store = await fresh(t)
      await store.documents.startTracking()
      const old = Date.now() - 10 * DAY
      const used = await stored(store, { createdAt: old, size: 1_000 })
      const orphan = await stored(store, { createdAt: old, size: 4_000 })
      const young = await stored(store, { size: 50 })
      await store.documents.save('a', [used.key], alice)
      assert.equal(await store.files.usage('alice'), 5_050)
      const line = Date.now() - 7 * DAY
      assert.equal(await store.documents.removeOrphan(used.key, { storedBefore: line }), null)
      assert.equal(await store.documents.removeOrphan(young.key, { storedBefore: line }), null)
      assert.deepEqual(
        await store.documents.removeOrphan(orphan.key, { storedBefore: line }),
        orphan,
      )
      assert.equal(await store.documents.removeOrphan(orphan.key, { storedBefore: line }), null)
      assert.equal(await store.files.get(orphan.key), null)
      assert.equal(await store.files.usage('alice'), 1_050)
      const listed = await store.files.list({ categories: ['image'], start: 0, size: 10 })
      assert.equal(listed.total, 2)
    })

    test('the within callback of an orphan removal runs in its transaction, and its failure keeps the file', async (t) => {
      const store = await fresh(t)
      await store.documents.startTracking()
      const orphan = await stored(store, { createdAt: Date.now() - 10 * DAY })
      let inside: unknown
      await assert.rejects(
        store.documents.removeOrphan(orphan.key, {
          storedBefore: Date.now(),
          within: async (trx, removed) => {
            const row = await trx
              .selectFrom('files')
              .where('key', '=', orphan.key)
              .selectAll()
              .executeTakeFirst()
            inside = { gone: row === undefined, removed: removed.key }
            throw new Error('outbox failed')
          },
        }),
        /outbox failed/,
      )
      assert.deepEqual(inside, { gone: true, removed: orphan.key })
      assert.deepEqual(await store.files.get(orphan.key), orphan)
    })

    test('a file removed from the index leaves the documents that referenced it', async (t) => {
      const store = await fresh(t)
      const a = await stored(store)
      const b = await stored(store)
      await store.documents.save('post', [a.key, b.key], alice)
      assert.equal(await store.files.remove(a.key), true)
      assert.deepEqual((await store.documents.get('post'))?.keys, [b.key])
    })

    test('two nodes saving a new document at once: one user owns it, the other is refused', async (t) => {
      const [one, two] = await twoMigratedNodes(t, openNodes)
      const outcomes = await Promise.allSettled([
        one.documents.save('race', [], alice),
        two.documents.save('race', [], bob),
      ])
      const owner = (await one.documents.get('race'))?.owner
      assert.ok(owner === 'alice' || owner === 'bob')
      const refused = outcomes.filter((o) => o.status === 'rejected')
      assert.equal(refused.length, 1)
      assert.ok(forbidden((refused[0] as PromiseRejectedResult).reason))
    })
  })
}
