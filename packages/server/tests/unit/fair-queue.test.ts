import assert from 'node:assert/strict'
import { createFairQueue } from '../../src/images/fair-queue.js'
import { eventually } from '../helpers/eventually.js'
import { describe, test } from '../helpers/test.js'

/** A job that runs until `finish()` is called, recording the weight running beside it. */
function controllable() {
  const jobs: { client: string; weight: number; finish: () => void }[] = []
  let running = 0
  let peak = 0
  const job = (client: string, weight: number) => () =>
    new Promise<string>((resolve) => {
      running += weight
      peak = Math.max(peak, running)
      jobs.push({
        client,
        weight,
        finish: () => {
          running -= weight
          resolve(client)
        },
      })
    })
  return { jobs, job, peak: () => peak }
}

const never = new AbortController().signal

describe('the fair image queue', () => {
  test('never runs more decoded pixels at once than maxWeight, but a larger image runs alone', async () => {
    const q = createFairQueue({ slots: 4, maxWeight: 100, maxQueued: 50, maxQueuedPerClient: 50 })
    const c = controllable()
    const done = [60, 60, 30, 250, 10].map((w, i) => q.run(`c${i}`, w, never, c.job(`c${i}`, w)))
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setImmediate(r))
      const next = c.jobs.find((j) => !('done' in j))
      assert.ok(next, 'a job should be running')
      Object.assign(next, { done: true })
      next.finish()
    }
    await Promise.all(done)
    assert.equal(c.peak(), 250)
    assert.ok(c.jobs.filter((j) => j.weight !== 250).every((j) => j.weight <= 100))
  })

  test('takes turns between clients instead of serving them in arrival order', async () => {
    const q = createFairQueue({ slots: 1, maxWeight: 1e9, maxQueued: 50, maxQueuedPerClient: 50 })
    const c = controllable()
    const order: string[] = []
    const all = [
      ...['a', 'a', 'a', 'a'].map((x) => q.run(x, 1, never, c.job(x, 1))),
      ...['b', 'b', 'b'].map((x) => q.run(x, 1, never, c.job(x, 1))),
      q.run('c', 1, never, c.job('c', 1)),
    ].map((p) => p.then((x) => order.push(x)))
    // Finishes the running job, again and again, until all eight have run.
    await eventually(
      () => {
        c.jobs[order.length]?.finish()
        return order.length === 8
      },
      { intervalMs: 0, what: 'the eight jobs run in turn' },
    )
    await Promise.all(all)
    assert.deepEqual(order, ['a', 'a', 'b', 'c', 'a', 'b', 'a', 'b'])
  })

  test('refuses with UE_BUSY past its bounds or when a waiting job is given up', async () => {
    const q = createFairQueue({ slots: 1, maxWeight: 1e9, maxQueued: 3, maxQueuedPerClient: 2 })
    const c = controllable()
    const first = q.run('a', 1, never, c.job('a', 1))
    await new Promise((r) => setImmediate(r))
    const waits = [q.run('a', 1, never, c.job('a', 1)), q.run('a', 1, never, c.job('a', 1))]
    await assert.rejects(q.run('a', 1, never, c.job('a', 1)), { code: 'UE_BUSY' })
    const gaveUp = new AbortController()
    const b = q.run('b', 1, gaveUp.signal, c.job('b', 1))
    await assert.rejects(q.run('c', 1, never, c.job('c', 1)), { code: 'UE_BUSY' })
    gaveUp.abort()
    await assert.rejects(b, { code: 'UE_BUSY' })
    assert.equal(q.queued, 2)
    c.jobs[0]?.finish()
    for (let i = 1; i <= 2; i++) {
      await new Promise((r) => setImmediate(r))
      c.jobs[i]?.finish()
    }
    await Promise.all([first, ...waits])
    assert.equal(q.queued, 0)
  })
})
