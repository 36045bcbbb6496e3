import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { createRenderPool } from '../../src/formula/pool.js'
import { test } from '../helpers/test.js'

const OPTIONS = {
  workers: 1,
  timeoutMs: 10_000,
  maxQueue: 8,
  memoryMb: 256,
  limits: { maxMacros: 500, maxBuffer: 20_000 },
}

test('a render worker left without work is ended after its idle time and started again on demand', async (t) => {
  const pool = createRenderPool({ ...OPTIONS, idleMs: 300 })
  t.after(() => pool.close())
  assert.equal((await pool.render('x^2')).kind, 'svg')
  // Work that keeps coming keeps the same worker.
  assert.equal((await pool.render('y^2')).kind, 'svg')
  assert.equal(pool.stats.workersStarted, 1)
  await sleep(900)
  assert.equal((await pool.render('z^2')).kind, 'svg')
  assert.equal(pool.stats.workersStarted, 2, 'the idle worker was ended, so a new one started')
})

test('a render worker that keeps getting work within its idle time is never ended', async (t) => {
  const pool = createRenderPool({ ...OPTIONS, idleMs: 2_000 })
  t.after(() => pool.close())
  for (const tex of ['a', 'b', 'c', 'd']) {
    assert.equal((await pool.render(tex)).kind, 'svg')
    await sleep(200)
  }
  assert.equal(pool.stats.workersStarted, 1)
})
