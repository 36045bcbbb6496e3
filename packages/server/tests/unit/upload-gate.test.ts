import assert from 'node:assert/strict'
import { tmpdir } from 'node:os'
import { createUploadGate } from '../../src/admission/gate.js'
import { createLimiters } from '../../src/limits/limiter.js'
import { test } from '../helpers/test.js'

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length

for (const shared of [false, true]) {
  test(`an upload handed a slot after waiting leaves no timer running (${shared ? 'shared' : 'in-memory'} counts)`, async () => {
    const memory = createLimiters(null)
    // Counts kept in memory, but treated as shared, so the waiter's retry timer runs as it does
    // on a PostgreSQL index.
    const limiters = shared ? { ...memory, shared: true } : memory
    const gate = createUploadGate(
      {
        uploadsPerMinute: 0,
        concurrentUploads: 1,
        uploadQueue: 4,
        uploadQueueWaitMs: 60_000,
        minFreeBytes: 0,
        exemptUsers: [],
        volumes: [tmpdir()],
      },
      { limiters },
    )
    const client = { user: 'alice' }
    const first = await gate.admit(client)
    const before = timers()
    const waiting = gate.admit(client)
    await new Promise((resolve) => setImmediate(resolve))
    assert.ok(timers() > before, 'the waiting upload has its deadline running')
    first()
    const second = await waiting
    second()
    assert.equal(timers(), before, 'the wait left a timer behind')
  })
}
