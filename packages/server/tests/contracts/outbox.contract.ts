import assert from 'node:assert/strict'
import type { OutboxEntry } from '../../src/db/outbox.js'
import type { MetadataStore, NewFileEntry } from '../../src/db/types.js'
import type { StorageKey } from '../../src/shared/types.js'
import { describe, type TestContext, test } from '../helpers/test.js'
import { type OpenNodes, twoMigratedNodes } from './two-nodes.js'

/**
 * The behaviour every dialect of the webhook outbox must show. `openNodes` returns two stores
 * over one empty database, as two nodes of a deployment see it; the suite migrates and closes
 * them.
 */
export function outboxContract(name: string, openNodes: OpenNodes) {
  const nodes = (t: TestContext) => twoMigratedNodes(t, openNodes)

  let n = 0
  const T0 = 1_800_000_000_000
  const entry = (subject: string, createdAt = T0): OutboxEntry => {
    const id = `event-${++n}`
    return { eventId: id, type: 'fileStored', subject, body: `{"id":"${id}"}`, createdAt }
  }
  const file = (key: string): NewFileEntry => ({
    key: key as StorageKey,
    category: 'file',
    originalName: 'a.pdf',
    ext: '.pdf',
    size: 10,
    mime: 'application/pdf',
    sha256: '',
  })
  /** Records each entry in a transaction of its own, beside a file row. */
  async function record(store: MetadataStore, ...entries: OutboxEntry[]) {
    for (const e of entries)
      await store.files.add(file(`f/${e.eventId}.pdf`), {
        within: (trx) => store.outbox.record(trx, e),
      })
  }
  const claim = (store: MetadataStore, owner: string, now: number, limit = 10, leaseMs = 1_000) =>
    store.outbox.claim({ owner, now, leaseMs, limit })

  describe(`webhook outbox (${name})`, () => {
    test('an event exists exactly when the transaction that recorded it commits', async (t) => {
      const [a] = await nodes(t)
      const kept = entry('file:kept')
      await record(a, kept)
      const lost = entry('file:lost')
      await assert.rejects(
        a.files.add(file('f/lost.pdf'), {
          within: async (trx) => {
            await a.outbox.record(trx, lost)
            throw new Error('the change fails after its event was written')
          },
        }),
      )
      assert.equal(await a.files.get('f/lost.pdf' as StorageKey), null)
      const claimed = await claim(a, 'a', T0)
      assert.deepEqual(
        claimed.map((c) => [c.eventId, c.body, c.subject, c.createdAt, c.attempt]),
        [[kept.eventId, kept.body, 'file:kept', T0, 1]],
      )
      assert.equal(await a.outbox.waiting(), 1)
    })

    test('a removed file row runs its work in the same transaction, and only when a row went', async (t) => {
      const [a] = await nodes(t)
      await a.files.add({ ...file('f/gone.pdf'), owner: 'alice' })
      const seen: string[] = []
      const removed = await a.files.remove('f/gone.pdf' as StorageKey, {
        within: async (trx, row) => {
          seen.push(`${row.key} ${row.owner}`)
          await a.outbox.record(trx, entry(`file:${row.key}`))
        },
      })
      assert.equal(removed, true)
      const again = await a.files.remove('f/gone.pdf' as StorageKey, {
        within: async () => void seen.push('again'),
      })
      assert.equal(again, false)
      assert.deepEqual(seen, ['f/gone.pdf alice'])
      assert.equal(await a.outbox.waiting(), 1)

      await a.files.add(file('f/stays.pdf'))
      await assert.rejects(
        a.files.remove('f/stays.pdf' as StorageKey, {
          within: async () => {
            throw new Error('the event cannot be written')
          },
        }),
      )
      assert.notEqual(await a.files.get('f/stays.pdf' as StorageKey), null)
    })

    test('a claimed event is leased: no node claims it again until the lease runs out', async (t) => {
      const [a, b] = await nodes(t)
      await record(a, entry('file:x'))
      const [first] = await claim(a, 'node-a', T0, 10, 1_000)
      assert.equal(first?.attempt, 1)
      assert.equal(first?.leaseUntil, T0 + 1_000)
      assert.deepEqual(await claim(b, 'node-b', T0 + 999), [])
      const [again] = await claim(b, 'node-b', T0 + 1_000)
      assert.equal(again?.id, first?.id)
      assert.equal(again?.attempt, 2)
    })

    test('two nodes claiming at the same time never get the same event', async (t) => {
      const [a, b] = await nodes(t)
      const entries = Array.from({ length: 40 }, (_, i) => entry(`file:${i}`))
      await record(a, ...entries)
      const claims = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          i % 2 ? claim(a, 'node-a', T0, 3) : claim(b, 'node-b', T0, 3),
        ),
      )
      const ids = claims.flat().map((c) => c.eventId)
      assert.equal(ids.length, 40)
      assert.deepEqual(new Set(ids), new Set(entries.map((e) => e.eventId)))
    })

    test('events of one subject are claimed one at a time, in order, without holding up others', async (t) => {
      const [a] = await nodes(t)
      const first = entry('document:1')
      const second = entry('document:1')
      const other = entry('document:2')
      await record(a, first, second, other)
      const batch = await claim(a, 'a', T0)
      assert.deepEqual(
        batch.map((c) => c.eventId),
        [first.eventId, other.eventId],
      )
      // Even once the first one's lease is over, the second waits for it to go.
      assert.deepEqual(
        (await claim(a, 'a', T0 + 5_000)).map((c) => c.eventId),
        [first.eventId, other.eventId],
      )
      await a.outbox.remove(batch[0]?.id as number)
      assert.deepEqual(
        (await claim(a, 'a', T0 + 10_000)).map((c) => c.eventId),
        [second.eventId, other.eventId],
      )
    })

    test('a failed attempt is due again at its time, for any node, and a lost lease cannot move it', async (t) => {
      const [a, b] = await nodes(t)
      await record(a, entry('file:y'))
      const [row] = await claim(a, 'node-a', T0)
      assert.ok(row)
      // Another node's settlement of an event it no longer holds changes nothing.
      await b.outbox.retryAt(row.id, { owner: 'node-b', dueAt: T0 + 60_000, error: 'x' })
      await a.outbox.retryAt(row.id, { owner: 'node-a', dueAt: T0 + 100, error: 'HTTP 500' })
      assert.deepEqual(await claim(b, 'node-b', T0 + 99), [])
      const [retried] = await claim(b, 'node-b', T0 + 100)
      assert.equal(retried?.attempt, 2)
      await b.outbox.remove(row.id)
      assert.equal(await a.outbox.waiting(), 0)
      assert.deepEqual(await claim(a, 'node-a', T0 + 1_000_000), [])
    })
  })
}
