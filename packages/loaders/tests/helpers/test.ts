import * as nodeTest from 'node:test'

export { after, before, describe, type TestContext } from 'node:test'

/** The loaders' tests get the server tests' default deadline: a hang fails with its own name. */
export function test(
  name: string,
  a: nodeTest.TestOptions | nodeTest.TestFn,
  b?: nodeTest.TestFn,
): Promise<void> {
  const [options, fn] = typeof a === 'function' ? [{}, a] : [a, b as nodeTest.TestFn]
  return nodeTest.test(name, { timeout: 120_000, ...options }, fn)
}
