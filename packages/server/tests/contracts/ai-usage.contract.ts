import assert from 'node:assert/strict'
import { describe, type TestContext, test } from 'node:test'
import type { MetadataStore } from '../../src/db/types.js'

/**
 * The behaviour every dialect of the AI usage counts must show. `openNodes` returns two stores
 * over one empty database, as two nodes of a deployment see it; the suite migrates and closes them.
 */
export function aiUsageContract(
  name: string,
  openNodes: () => Promise<[MetadataStore, MetadataStore]>,
) {
  async function nodes(t: TestContext) {
    const [a, b] = await openNodes()
    t.after(async () => {
      await a.close()
      await b.close()
    })
    await a.migrate()
    await b.migrate()
    return [a.aiUsage, b.aiUsage] as const
  }

  describe(`AI usage counts (${name})`, () => {
    test('a count starts at zero and adds up per subject and per day', async (t) => {
      const [usage] = await nodes(t)
      assert.equal(await usage.used('user:alice', '2026-11-25'), 0)
      await usage.add('user:alice', '2026-11-25', 120)
      await usage.add('user:alice', '2026-11-25', 30)
      await usage.add('user:bob', '2026-11-25', 7)
      await usage.add('user:alice', '2026-11-26', 5)
      assert.equal(await usage.used('user:alice', '2026-11-25'), 150)
      assert.equal(await usage.used('user:bob', '2026-11-25'), 7)
      assert.equal(await usage.used('user:alice', '2026-11-26'), 5)
      assert.equal(await usage.used('user:carol', '2026-11-25'), 0)
    })

    test('counts beyond 32 bits are kept exactly', async (t) => {
      const [usage] = await nodes(t)
      await usage.add('user:alice', '2026-11-25', 3_000_000_000)
      await usage.add('user:alice', '2026-11-25', 3_000_000_000)
      assert.equal(await usage.used('user:alice', '2026-11-25'), 6_000_000_000)
    })

    test('two nodes adding to one count at the same time lose none of it', async (t) => {
      const [a, b] = await nodes(t)
      await Promise.all(
        Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).add('user:alice', '2026-11-25', 3)),
      )
      assert.equal(await a.used('user:alice', '2026-11-25'), 120)
      assert.equal(await b.used('user:alice', '2026-11-25'), 120)
    })

    test('the days before a given day are forgotten, that day and later ones kept', async (t) => {
      const [usage] = await nodes(t)
      for (const day of ['2026-10-24', '2026-10-25', '2026-10-26', '2026-11-25'])
        await usage.add('user:alice', day, 1)
      assert.equal(await usage.forgetBefore('2026-10-25'), 1)
      assert.equal(await usage.used('user:alice', '2026-10-24'), 0)
      assert.equal(await usage.used('user:alice', '2026-10-25'), 1)
      assert.equal(await usage.used('user:alice', '2026-11-25'), 1)
    })
  })
}
