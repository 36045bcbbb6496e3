import assert from 'node:assert/strict'
import { type NewUpload, PROCESSING_GRACE_MS } from '../../src/db/upload-ledger.js'
import { describe, type TestContext, test } from '../helpers/test.js'
import { type OpenNodes, twoMigratedNodes } from './two-nodes.js'

/**
 * The behaviour every dialect of the upload ledger must show. `openNodes` returns two stores over
 * one empty database, as two nodes of a deployment see it; the suite migrates and closes them.
 */
export function uploadLedgerContract(name: string, openNodes: OpenNodes) {
  async function nodes(t: TestContext) {
    const [a, b] = await twoMigratedNodes(t, openNodes)
    return [a.uploads, b.uploads] as const
  }

  const T0 = 1_800_000_000_000
  let n = 0
  const upload = (o: Partial<NewUpload> = {}): NewUpload => ({
    id: `upload-${++n}-${'x'.repeat(22)}`,
    via: 'tus',
    owner: 'alice',
    client: 'user:alice',
    category: 'video',
    originalName: '假期 video.mp4',
    size: 1_000,
    storeRef: `store-${n}`,
    createdAt: T0,
    expiresAt: T0 + 86_400_000,
    ...o,
  })

  describe(`upload ledger (${name})`, () => {
    test('a new upload is receiving, and reads back with every field, sizes past 32 bits exact', async (t) => {
      const [ledger, other] = await nodes(t)
      const made = upload({ size: 6_000_000_000, owner: null, client: null, via: 'direct' })
      const created = await ledger.create(made)
      assert.deepEqual(created, { ...made, state: 'receiving', result: null })
      assert.deepEqual(await other.get(made.id), created)
      assert.equal(await ledger.get('no-such-upload'), null)
    })

    test('an id can be created only once', async (t) => {
      const [ledger] = await nodes(t)
      const made = upload()
      await ledger.create(made)
      await assert.rejects(ledger.create({ ...made, owner: 'mallory' }), {
        code: 'UE_INDEX_FAILED',
      })
      assert.equal((await ledger.get(made.id))?.owner, 'alice')
    })

    test('of many claims on two nodes at once exactly one wins, and a settled row stays settled', async (t) => {
      const [a, b] = await nodes(t)
      const made = upload()
      await a.create(made)
      const wins = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).claim(made.id)),
      )
      assert.equal(wins.filter(Boolean).length, 1)
      assert.equal((await b.get(made.id))?.state, 'processing')
      const result = {
        state: 'SUCCESS',
        url: '/uploads/video/2026/a.mp4',
        title: 'a.mp4',
        original: '假期 video.mp4',
        type: '.mp4',
        size: 990,
      } as const
      assert.equal(await b.settle(made.id, 'done', result), true)
      assert.equal(await a.settle(made.id, 'refused', { code: 'UE_INTERNAL', message: 'x' }), false)
      assert.equal(await a.claim(made.id), false)
      const settled = await a.get(made.id)
      assert.equal(settled?.state, 'done')
      assert.deepEqual(settled?.result, result)
      assert.equal(await a.claim('no-such-upload'), false)
    })

    test('a row is settled only from processing, and a refusal keeps its code and message', async (t) => {
      const [ledger] = await nodes(t)
      const made = upload()
      await ledger.create(made)
      const refusal = { code: 'UE_CONTENT_MISMATCH', message: 'not what it claims' }
      assert.equal(await ledger.settle(made.id, 'refused', refusal), false)
      assert.equal((await ledger.get(made.id))?.state, 'receiving')
      assert.equal(await ledger.claim(made.id), true)
      assert.equal(await ledger.settle(made.id, 'refused', refusal), true)
      const row = await ledger.get(made.id)
      assert.equal(row?.state, 'refused')
      assert.deepEqual(row?.result, refusal)
    })

    test('an owner’s reservation sums the declared sizes of unsettled rows only', async (t) => {
      const [a, b] = await nodes(t)
      const receiving = upload({ size: 3_000_000_000 })
      const processing = upload({ size: 3_000_000_000 })
      const done = upload({ size: 500 })
      const refused = upload({ size: 700 })
      for (const row of [receiving, processing, done, refused]) await a.create(row)
      await a.create(upload({ owner: 'bob', size: 9 }))
      await a.create(upload({ owner: null, size: 11 }))
      for (const row of [processing, done, refused]) assert.equal(await a.claim(row.id), true)
      await a.settle(done.id, 'done', {
        state: 'SUCCESS',
        url: '/u/x.png',
        title: 'x.png',
        original: 'x.png',
        type: '.png',
        size: 500,
      })
      await a.settle(refused.id, 'refused', { code: 'UE_QUOTA_EXCEEDED', message: 'full' })
      assert.equal(await b.reserved('alice'), 6_000_000_000)
      assert.equal(await b.reserved('alice', processing.id), 3_000_000_000)
      assert.equal(await b.reserved('bob'), 9)
      assert.equal(await b.reserved('carol'), 0)
    })

    test('a client’s open uploads of one way are its rows still receiving, on every node', async (t) => {
      const [ledger, other] = await nodes(t)
      const mine = upload({ via: 'direct', client: '127.0.0.9' })
      await ledger.create(mine)
      await ledger.create(upload({ via: 'direct', client: '127.0.0.9' }))
      await ledger.create(upload({ via: 'tus', client: '127.0.0.9' }))
      await ledger.create(upload({ via: 'direct', client: '127.0.0.10' }))
      assert.equal(await other.receivingOf('127.0.0.9', 'direct'), 2)
      assert.equal(await ledger.claim(mine.id), true)
      assert.equal(await other.receivingOf('127.0.0.9', 'direct'), 1)
      assert.equal(await other.receivingOf('127.0.0.11', 'direct'), 0)
    })

    test('expired rows are the unfinished and settled ones past their expiry, processing ones only an hour later', async (t) => {
      const [ledger] = await nodes(t)
      const at = T0 + 10_000
      const early = await ledger.create(upload({ expiresAt: at - 2 }))
      const due = await ledger.create(upload({ expiresAt: at }))
      await ledger.create(upload({ expiresAt: at + 1 }))
      const busy = await ledger.create(upload({ expiresAt: at - 5 }))
      await ledger.claim(busy.id)
      const finished = await ledger.create(upload({ expiresAt: at - 1 }))
      await ledger.claim(finished.id)
      await ledger.settle(finished.id, 'refused', { code: 'UE_FILE_EMPTY', message: 'empty' })
      assert.deepEqual(
        (await ledger.expired(at)).map((r) => r.id),
        [early.id, finished.id, due.id],
      )
      assert.deepEqual(
        (await ledger.expired(at, 2)).map((r) => r.id),
        [early.id, finished.id],
      )
      assert.deepEqual(
        (await ledger.expired(at + PROCESSING_GRACE_MS - 5)).map((r) => r.id).slice(0, 2),
        [busy.id, early.id],
      )
    })

    test('a removed row is gone for every node, and removing it again says so', async (t) => {
      const [a, b] = await nodes(t)
      const made = upload()
      await a.create(made)
      assert.equal(await b.remove(made.id), true)
      assert.equal(await a.get(made.id), null)
      assert.equal(await a.remove(made.id), false)
      assert.equal(await a.claim(made.id), false)
    })
  })
}
