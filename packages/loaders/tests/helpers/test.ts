import * as nodeTest from 'node:test'

export { describe, type TestContext } from 'node:test'

const DEADLINE_MS = 120_000

/** The loaders' tests get the server tests' default deadline: a hang fails with its own name. */
export function test(
  name: string,
  a: nodeTest.TestOptions | nodeTest.TestFn,
  b?: nodeTest.TestFn,
): Promise<void> {
  const [options, fn] = typeof a === 'function' ? [{}, a] : [a, b as nodeTest.TestFn]
  return nodeTest.test(name, { timeout: DEADLINE_MS, ...options }, fn)
}

type Hook = typeof nodeTest.before

/** `node:test`'s hooks, with the same deadline. */
export const before: Hook = (fn, options) =>
  nodeTest.before(fn, { timeout: DEADLINE_MS, ...options })
export const after: Hook = (fn, options) => nodeTest.after(fn, { timeout: DEADLINE_MS, ...options })
