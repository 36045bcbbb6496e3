import assert from 'node:assert/strict'
import { Readable } from 'node:stream'
import type { FileEntry, MetadataStore } from '../../src/db/types.js'
import { sweepOrphans } from '../../src/documents/orphans.js'
import { documentEventHooks, orphanEventHooks } from '../../src/events/document-events.js'
import { createEvents } from '../../src/events/publisher.js'
import type { UeditorEvent } from '../../src/events/types.js'
import { isUeError } from '../../src/shared/errors.js'
import { silentLogger } from '../../src/shared/log.js'
import type { StorageKey } from '../../src/shared/types.js'
import { localDiskStorage } from '../../src/storage/local.js'
import { tempDir } from '../helpers/temp-dir.js'
import { describe, type TestContext, test } from '../helpers/test.js'

/**
 * The document events over every dialect: recorded in the transaction of the documents
 * repository's save, delete and orphan removal, and heard in process once each has committed.
 */
export function documentEventsContract(name: string, open: () => Promise<MetadataStore>): void {
  async function setUp(t: TestContext) {
    const store = await open()
    t.after(() => store.close())
    await store.migrate()
    const heard: UeditorEvent[] = []
    const hear = (e: UeditorEvent) => void heard.push(e)
    const events = createEvents({
      outbox: store.outbox,
      handlers: {
        documentSaved: hear,
        documentDeleted: hear,
        fileDeleted: hear,
      },
      log: silentLogger,
    })
    const recorded = async () => {
      const rows = await store.outbox.claim({
        owner: 'test',
        now: Date.now() + 60_000,
        leaseMs: 1,
        limit: 100,
      })
      // Leased for 1 ms: claimable again by the next look.
      return rows.map((r) => JSON.parse(r.body) as UeditorEvent)
    }
    // The handlers run on a later turn of the event loop.
    const settled = () => new Promise((resolve) => setImmediate(() => setImmediate(resolve)))
    const hooks = documentEventHooks(events, '/uploads/')
    return {
      store,
      heard,
      recorded,
      settled,
      hooks,
      orphans: orphanEventHooks(events, '/uploads/'),
    }
  }

  let n = 0
  const stored = (store: MetadataStore, createdAt?: number): Promise<FileEntry> =>
    store.files.add({
      key: `2026/11/26/doc-${++n}.png` as StorageKey,
      category: 'image',
      originalName: 'a.png',
      ext: '.png',
      size: 100,
      mime: 'image/png',
      sha256: '',
      owner: 'alice',
      ...(createdAt === undefined ? {} : { createdAt }),
    })

  describe(`document events (${name})`, () => {
    test('a save records documentSaved in its transaction and announces it after', async (t) => {
      const { store, heard, recorded, settled, hooks } = await setUp(t)
      const file = await stored(store)
      const foreign = ['https://elsewhere.example/a.jpg']
      const saved = await store.documents.save('post-1', [file.key], {
        user: 'alice',
        anyDocument: false,
        within: (trx, doc) => hooks.saved.within(trx, doc, { foreign }),
      })
      hooks.saved.after(saved)
      await settled()
      const [event] = await recorded()
      assert.equal(event?.type, 'documentSaved')
      assert.deepEqual(event?.data, {
        id: 'post-1',
        owner: 'alice',
        files: [`/uploads/${file.key}`],
        foreign: ['https://elsewhere.example/a.jpg'],
      })
      assert.deepEqual(heard, [event])
    })

    test('a save that fails inside its transaction records and announces nothing', async (t) => {
      const { store, heard, recorded, settled, hooks } = await setUp(t)
      await store.documents.save('post-2', [], { user: 'alice', anyDocument: false })
      const article = { foreign: [] }
      await assert.rejects(
        store.documents.save('post-2', [], {
          user: 'bob',
          anyDocument: false,
          within: (trx, doc) => hooks.saved.within(trx, doc, article),
        }),
        (e) => isUeError(e) && e.code === 'UE_FORBIDDEN',
      )
      await assert.rejects(
        store.documents.save('post-3', [], {
          user: 'alice',
          anyDocument: false,
          async within(trx, doc) {
            await hooks.saved.within(trx, doc, article)
            throw new Error('a later step of the save fails')
          },
        }),
      )
      assert.equal(await store.documents.get('post-3'), null)
      await settled()
      assert.deepEqual(await recorded(), [])
      assert.deepEqual(heard, [])
    })

    test('a delete records documentDeleted; deleting nothing records nothing', async (t) => {
      const { store, heard, recorded, settled, hooks } = await setUp(t)
      await store.documents.save('post-4', [], { user: 'alice', anyDocument: false })
      const options = { user: 'alice', anyDocument: false, within: hooks.deleted.within }
      const deleted = await store.documents.remove('post-4', options)
      if (deleted) hooks.deleted.after(deleted)
      assert.equal(await store.documents.remove('post-4', options), null)
      await settled()
      const events = await recorded()
      assert.deepEqual(
        events.map((e) => [e.type, e.data]),
        [['documentDeleted', { id: 'post-4', owner: 'alice' }]],
      )
      assert.deepEqual(heard, events)
    })

    test('the orphan clean-up records fileDeleted with reason orphan for each file it removes, and only those', async (t) => {
      const { store, heard, recorded, settled, orphans } = await setUp(t)
      await store.documents.startTracking(1_000)
      const kept = await stored(store, 2_000)
      const orphan = await stored(store, 2_000)
      await store.documents.save('post-5', [kept.key], { user: 'alice', anyDocument: false })
      const storage = localDiskStorage({ root: await tempDir(t, 'ue-orphans-') })
      for (const file of [kept, orphan])
        await storage.put(file.key, Readable.from([Buffer.from('png')]), {
          size: 3,
          contentType: 'image/png',
        })
      const result = await sweepOrphans(
        { documents: store.documents, storage, log: silentLogger },
        { storedBefore: 10_000, fix: true, hooks: orphans },
      )
      assert.equal(result.removed, 1)
      assert.equal(await storage.stat(orphan.key), null)
      assert.notEqual(await storage.stat(kept.key), null)
      await settled()
      const events = await recorded()
      assert.deepEqual(
        events.map((e) => [e.type, e.data]),
        [
          [
            'fileDeleted',
            { key: orphan.key, url: `/uploads/${orphan.key}`, owner: 'alice', reason: 'orphan' },
          ],
        ],
      )
      assert.deepEqual(heard, events)
    })
  })
}
