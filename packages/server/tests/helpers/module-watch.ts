/**
 * `node --import <this file>`: watches what the process loads, with no trace flag, for the
 * tests of what loads when (tests/standalone/module-loading.test.ts).
 *   UE_TEST_MODULES_RECORD=<file>   every module loaded, one path or URL a line: ES modules as
 *                                   they load, CommonJS ones (require.cache) when the process exits
 *   UE_TEST_REFUSE_PACKAGES=a,b     these packages neither import nor require, as if absent
 */

import { appendFileSync } from 'node:fs'
import Module, { createRequire, register } from 'node:module'
import { packageOf } from './module-watch-hooks.js'

const record = process.env.UE_TEST_MODULES_RECORD
const refuse = (process.env.UE_TEST_REFUSE_PACKAGES ?? '').split(',').filter(Boolean)

register('./module-watch-hooks.js', import.meta.url, { data: { record, refuse } })

if (refuse.length > 0) {
  // require() does not go through the hooks above.
  const loader = Module as unknown as {
    _resolveFilename(request: string, ...rest: unknown[]): string
  }
  const resolveFilename = loader._resolveFilename
  loader._resolveFilename = function (request: string, ...rest: unknown[]) {
    const name = packageOf(request)
    if (name && refuse.includes(name)) {
      const e = new Error(`Cannot find module '${request}'`) as NodeJS.ErrnoException
      e.code = 'MODULE_NOT_FOUND'
      throw e
    }
    return resolveFilename.call(this, request, ...rest)
  }
}

if (record)
  process.on('exit', () => {
    const cache = createRequire(import.meta.url).cache
    appendFileSync(
      record,
      Object.keys(cache)
        .map((path) => `${path}\n`)
        .join(''),
    )
  })
