import * as nodeTest from 'node:test'

export { describe, type TestContext } from 'node:test'

/**
 * Every test's deadline unless it sets its own `timeout` (a slow lane raises it there): a test
 * that hangs fails with its own name. Node 20's runner applies `--test-timeout` to a whole file,
 * so the default is given here, to each test.
 */
export const TEST_DEADLINE_MS = 120_000

type TestOptions = nodeTest.TestOptions
type TestFn = nodeTest.TestFn

/** `node:test`'s `test(name, fn)` and `test(name, options, fn)`, with the default deadline. */
export function test(name: string, fn: TestFn): Promise<void>
export function test(name: string, options: TestOptions, fn: TestFn): Promise<void>
export function test(name: string, a: TestOptions | TestFn, b?: TestFn): Promise<void> {
  const [options, fn] = typeof a === 'function' ? [{}, a] : [a, b as TestFn]
  return nodeTest.test(name, { timeout: TEST_DEADLINE_MS, ...options }, fn)
}

type Hook = typeof nodeTest.before

/** `node:test`'s hooks, with the default deadline: a hook that hangs fails instead of holding the file. */
export const before: Hook = (fn, options) =>
  nodeTest.before(fn, { timeout: TEST_DEADLINE_MS, ...options })
export const after: Hook = (fn, options) =>
  nodeTest.after(fn, { timeout: TEST_DEADLINE_MS, ...options })
export const beforeEach: Hook = (fn, options) =>
  nodeTest.beforeEach(fn, { timeout: TEST_DEADLINE_MS, ...options })
export const afterEach: Hook = (fn, options) =>
  nodeTest.afterEach(fn, { timeout: TEST_DEADLINE_MS, ...options })
