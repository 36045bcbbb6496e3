import assert from 'node:assert/strict'
import { eventually } from '../helpers/eventually.js'
import { describe, test } from '../helpers/test.js'

describe('eventually, the one wait of the tests', () => {
  test('tries again until the check passes, and gives back what it returned', async () => {
    let tries = 0
    const value = await eventually(() => ++tries, { until: (n) => n === 3, what: 'a third try' })
    assert.equal(value, 3)
    let calls = 0
    await eventually(
      () => {
        calls++
        assert.ok(calls >= 2, 'not yet')
      },
      { what: 'a check that stops throwing' },
    )
    assert.equal(calls, 2)
    assert.equal(await eventually(() => calls > 0, { what: 'a true check' }), true)
  })

  test('a wait that never comes true fails at its deadline, naming what it waited for and the last failure', async () => {
    await assert.rejects(
      eventually(() => assert.equal(1 + 1, 3), { timeoutMs: 200, what: 'arithmetic to change' }),
      (e: Error) => {
        assert.match(e.message, /^not seen within 200 ms: arithmetic to change; last failure: /)
        assert.match(e.message, /2 !== 3/)
        return true
      },
    )
    await assert.rejects(
      eventually(() => 41, { until: (n) => n === 42, timeoutMs: 100, what: 'the answer' }),
      {
        message: 'not seen within 100 ms: the answer; last value: 41',
      },
    )
    await assert.rejects(
      eventually(() => false, { timeoutMs: 100, what: 'a false check' }),
      {
        message: 'not seen within 100 ms: a false check; last value: false',
      },
    )
  })

  test('a read that throws fails the wait at once instead of being tried again', async () => {
    let reads = 0
    const broken = new Error('the answer came too late')
    await assert.rejects(
      eventually(
        () => {
          reads++
          throw broken
        },
        { until: () => true, timeoutMs: 5_000, what: 'a read' },
      ),
      broken,
    )
    assert.equal(reads, 1)
  })

  test('a try that started in time and passes late is taken', async () => {
    const late = () => new Promise<string>((resolve) => setTimeout(() => resolve('late'), 150))
    assert.equal(await eventually(late, { timeoutMs: 100, what: 'a slow check' }), 'late')
  })

  test('a check that never settles fails at the deadline instead of holding the test', async () => {
    await assert.rejects(
      eventually(() => new Promise<never>(() => {}), { timeoutMs: 100, what: 'a hung check' }),
      {
        message:
          'not seen within 100 ms: a hung check; a try still running at 200 ms (before it: no try finished)',
      },
    )
  })
})
