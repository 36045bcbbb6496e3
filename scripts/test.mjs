#!/usr/bin/env node
// `npm test` after the build: Node's test runner over every compiled *.test.js of both
// packages. The files are listed here because `node --test <folder>` works on Node 20 only
// (from Node 21 on, arguments are glob patterns, and Node 20 has no globs).
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'

//
//   node scripts/test.mjs                    # every suite (what `npm test` runs)
//   node scripts/test.mjs storage db http    # only the server's suites in those folders
const suites = process.argv.slice(2)
const roots = suites.length
  ? suites.map((suite) => join('packages/server/dist/tests', suite))
  : ['packages/server/dist/tests', 'packages/loaders/dist/tests']
const files = roots
  .flatMap((root) =>
    readdirSync(root, { recursive: true, encoding: 'utf8' }).map((f) => join(root, f)),
  )
  .filter((f) => f.endsWith('.test.js'))
  .sort()
if (files.length === 0) {
  console.error(`no test files under ${roots.join(', ')}`)
  process.exit(1)
}
// A deadline for each test file (Node 20's runner applies --test-timeout to a whole file); each
// test has its own, from tests/helpers/test.ts, so a hung test fails with its own name.
const TEST_TIMEOUT_MS = 600_000
const args = [
  '--test',
  '--enable-source-maps',
  '--test-concurrency=2',
  `--test-timeout=${TEST_TIMEOUT_MS}`,
  ...files,
]
const { status, signal } = spawnSync(process.execPath, args, { stdio: 'inherit' })
process.exit(status ?? (signal ? 1 : 0))
