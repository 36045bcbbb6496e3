import assert from 'node:assert/strict'
import { createAiBudget } from '../../src/ai/limits.js'
import { describe, type TestContext, test } from '../helpers/test.js'
import { type OpenNodes, twoMigratedNodes } from './two-nodes.js'

/**
 * The behaviour every dialect of the AI usage counts must show. `openNodes` returns two stores
 * over one empty database, as two nodes of a deployment see it; the suite migrates and closes them.
 */
export function aiUsageContract(name: string, openNodes: OpenNodes) {
  async function nodes(t: TestContext) {
    const [a, b] = await twoMigratedNodes(t, openNodes)
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

    test('a reservation is added only while the day stays within the budget', async (t) => {
      const [usage] = await nodes(t)
      assert.equal(await usage.reserve('user:alice', '2026-11-25', 600, 1_000), true)
      assert.equal(await usage.reserve('user:alice', '2026-11-25', 500, 1_000), false)
      assert.equal(await usage.reserve('user:alice', '2026-11-25', 400, 1_000), true)
      assert.equal(await usage.reserve('user:alice', '2026-11-25', 1, 1_000), false)
      assert.equal(await usage.reserve('user:bob', '2026-11-25', 1_001, 1_000), false)
      assert.equal(await usage.used('user:alice', '2026-11-25'), 1_000)
      assert.equal(await usage.used('user:bob', '2026-11-25'), 0)
      // Settling gives back what a call did not use.
      await usage.add('user:alice', '2026-11-25', -300)
      assert.equal(await usage.used('user:alice', '2026-11-25'), 700)
    })

    test('two nodes reserving against one count at the same time never pass the budget', async (t) => {
      const [a, b] = await nodes(t)
      const granted = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          (i % 2 ? a : b).reserve('user:alice', '2026-11-25', 30, 500),
        ),
      )
      const n = granted.filter(Boolean).length
      t.diagnostic(`${n} of 40 reservations of 30 granted against a budget of 500`)
      assert.equal(n, 16)
      assert.equal(await a.used('user:alice', '2026-11-25'), 480)
    })

    test('concurrent calls of a fresh user on two nodes never take the day past its budget', async (t) => {
      const [a, b] = await nodes(t)
      const budgets = [a, b].map((usage) => createAiBudget(1_000, usage))
      const day = new Date().toISOString().slice(0, 10)
      // The finding's call: a 59,000-byte prompt against a budget of 1,000.
      await assert.rejects(
        budgets[0]?.reserve('user:fresh', 59_000 + 48, 4_096) as Promise<unknown>,
        {
          code: 'UE_AI_BUDGET_EXCEEDED',
        },
      )
      // Twenty calls at once, each a 200-token prompt bound, asking for 4,096 tokens of answer;
      // an honest upstream uses less than the bound and at most the cap it was sent.
      const outcomes = await Promise.allSettled(
        Array.from({ length: 20 }, async (_, i) => {
          const call = await (budgets[i % 2] as (typeof budgets)[0]).reserve(
            'user:fresh',
            200,
            4_096,
          )
          const used = 150 + Math.min(call.outputCap, 120)
          await call.settle(used)
          return used
        }),
      )
      const served = outcomes.filter((o) => o.status === 'fulfilled')
      const refused = outcomes.filter(
        (o) => o.status === 'rejected' && o.reason?.code === 'UE_AI_BUDGET_EXCEEDED',
      )
      const counted = await a.used('user:fresh', day)
      t.diagnostic(
        `served ${served.length}, refused ${refused.length}; counted ${counted} of a budget of 1000`,
      )
      assert.equal(served.length + refused.length, 20)
      assert.ok(served.length >= 1)
      assert.ok(counted <= 1_000, `counted ${counted}`)
      assert.equal(
        counted,
        served.reduce((n, o) => n + (o.status === 'fulfilled' ? o.value : 0), 0),
      )
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
