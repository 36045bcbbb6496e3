import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAiBudget } from '../../src/ai/limits.js'
import { openMetadataStore } from '../../src/db/open.js'
import { describe, type TestContext, test } from '../helpers/test.js'

async function usageStore(t: TestContext) {
  const dir = await mkdtemp(join(tmpdir(), 'ue-ai-budget-'))
  const store = await openMetadataStore({ driver: 'sqlite', file: join(dir, 'index.db') })
  t.after(async () => {
    await store.close()
    await rm(dir, { recursive: true, force: true })
  })
  await store.migrate()
  return store.aiUsage
}

const at = (iso: string) => () => Date.parse(iso)

describe('the AI daily budget', () => {
  test('a reservation is settled to what the call used, and a new UTC day starts full', async (t) => {
    const usage = await usageStore(t)
    const evening = createAiBudget(100, usage, at('2026-11-25T23:59:00Z'))
    const first = await evening.reserve('user:alice', 30, 50)
    assert.deepEqual([first.outputCap, first.tokens], [50, 80])
    assert.equal(await usage.used('user:alice', '2026-11-25'), 80)
    await first.settle(60)
    assert.equal(await usage.used('user:alice', '2026-11-25'), 60)
    // 40 left: the prompt's 30 fit, and the output cap is lowered to the 10 after it.
    const second = await evening.reserve('user:alice', 30, 50)
    assert.equal(second.outputCap, 10)
    await second.settle(40)
    await assert.rejects(evening.reserve('user:alice', 1, 50), { code: 'UE_AI_BUDGET_EXCEEDED' })
    const nextDay = createAiBudget(100, usage, at('2026-11-26T00:01:00Z'))
    assert.equal((await nextDay.reserve('user:alice', 30, 50)).outputCap, 50)
  })

  test('a prompt that does not fit in what is left is refused and reserves nothing', async (t) => {
    const usage = await usageStore(t)
    const budget = createAiBudget(1_000, usage, at('2026-11-25T08:00:00Z'))
    await assert.rejects(budget.reserve('user:alice', 59_000, 4_096), {
      code: 'UE_AI_BUDGET_EXCEEDED',
    })
    await assert.rejects(budget.reserve('user:alice', 1_000, 4_096), {
      code: 'UE_AI_BUDGET_EXCEEDED',
    })
    assert.equal(await usage.used('user:alice', '2026-11-25'), 0)
  })

  test('concurrent reservations of one user never add up past the budget', async (t) => {
    const usage = await usageStore(t)
    const budget = createAiBudget(1_000, usage, at('2026-11-25T08:00:00Z'))
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () => budget.reserve('user:alice', 100, 150)),
    )
    const granted = results.filter((r) => r.status === 'fulfilled')
    assert.ok(granted.length >= 1)
    assert.ok((await usage.used('user:alice', '2026-11-25')) <= 1_000)
    const reserved = granted.reduce((n, r) => n + r.value.tokens, 0)
    assert.equal(await usage.used('user:alice', '2026-11-25'), reserved)
  })

  test('the first call settled on a day forgets the counts of days more than 31 days back', async (t) => {
    const usage = await usageStore(t)
    await usage.add('user:alice', '2026-10-24', 5)
    await usage.add('user:alice', '2026-10-25', 5)
    const budget = createAiBudget(100, usage, at('2026-11-25T08:00:00Z'))
    await (await budget.reserve('user:bob', 1, 1)).settle(1)
    assert.equal(await usage.used('user:alice', '2026-10-24'), 0)
    assert.equal(await usage.used('user:alice', '2026-10-25'), 5)
  })

  test('without a budget nothing is counted', async (t) => {
    const usage = await usageStore(t)
    const none = createAiBudget(0, usage, at('2026-11-25T08:00:00Z'))
    const call = await none.reserve('user:alice', 500_000, 4_096)
    assert.equal(call.outputCap, 4_096)
    await call.settle(500)
    assert.equal(await usage.used('user:alice', '2026-11-25'), 0)
  })
})
