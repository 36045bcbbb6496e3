import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, type TestContext, test } from 'node:test'
import { createAiBudget } from '../../src/ai/limits.js'
import { openMetadataStore } from '../../src/db/open.js'

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
  test('what is left shrinks with each call counted, and a new UTC day starts full', async (t) => {
    const usage = await usageStore(t)
    const evening = createAiBudget(100, usage, at('2026-11-25T23:59:00Z'))
    assert.equal(await evening.left('user:alice'), 100)
    await evening.spend('user:alice', 60)
    assert.equal(await evening.left('user:alice'), 40)
    await evening.spend('user:alice', 40)
    await assert.rejects(evening.left('user:alice'), { code: 'UE_AI_BUDGET_EXCEEDED' })
    const nextDay = createAiBudget(100, usage, at('2026-11-26T00:01:00Z'))
    assert.equal(await nextDay.left('user:alice'), 100)
  })

  test('the first call counted on a day forgets the counts of days more than 31 days back', async (t) => {
    const usage = await usageStore(t)
    await usage.add('user:alice', '2026-10-24', 5)
    await usage.add('user:alice', '2026-10-25', 5)
    await createAiBudget(100, usage, at('2026-11-25T08:00:00Z')).spend('user:bob', 1)
    assert.equal(await usage.used('user:alice', '2026-10-24'), 0)
    assert.equal(await usage.used('user:alice', '2026-10-25'), 5)
  })

  test('without a budget nothing is counted', async (t) => {
    const usage = await usageStore(t)
    const none = createAiBudget(0, usage, at('2026-11-25T08:00:00Z'))
    await none.spend('user:alice', 500)
    assert.equal(await none.left('user:alice'), Number.POSITIVE_INFINITY)
    assert.equal(await usage.used('user:alice', '2026-11-25'), 0)
  })
})
