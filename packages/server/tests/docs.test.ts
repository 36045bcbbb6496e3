import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { EDITOR_DEFAULTS } from '../src/config/editor-defaults.js'
import { ENV_VARS } from '../src/config/env-var-table.js'
import { CODES } from '../src/shared/errors.js'
import { test } from './helpers/test.js'

const repoPath = (path: string) => fileURLToPath(new URL(`../../../../${path}`, import.meta.url))
const repoFile = (path: string) => readFileSync(repoPath(path), 'utf8')
const sourceFiles = (dir: string) =>
  readdirSync(repoPath(dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(ts|md)$/.test(f))
    .map((f) => join(repoPath(dir), f))

test('docs/config.md documents every editor key', () => {
  const doc = repoFile('docs/config.md')
  for (const key of Object.keys(EDITOR_DEFAULTS)) assert.ok(doc.includes(`\`${key}\``), key)
})

test('the environment table of docs/config.md lists every variable the server reads, each with the key it sets, and no other', () => {
  const section = repoFile('docs/config.md')
    .split(/^## /m)
    .find((s) => s.startsWith('Environment variables\n'))
  assert.ok(section, 'no "## Environment variables" section')
  // | `NAME` | `the.key` and more words | example |: the first quoted word of "sets" is the key.
  const rows = [...section.matchAll(/^\| `([A-Z0-9_]+)` \| ([^|]*) \|/gm)]
  const documented = new Map(rows.map((m) => [m[1], /`([^`]+)`/.exec(m[2] ?? '')?.[1]]))
  assert.deepEqual(
    [...documented.keys()].sort(),
    [...ENV_VARS.map((v) => v.name), 'UEDITOR_CONFIG'].sort(),
  )
  for (const v of ENV_VARS) assert.equal(documented.get(v.name), v.path, v.name)
})

test('docs/errors.md has exactly one heading per error code, and every heading is a code', () => {
  const headings = [...repoFile('docs/errors.md').matchAll(/^## (.*)$/gm)].map((m) => m[1])
  assert.deepEqual([...headings].sort(), Object.keys(CODES).sort())
})

test('every UE_ code named in the server source and the docs is in the catalogue', () => {
  const named = new Set<string>()
  for (const file of [...sourceFiles('packages/server/src'), ...sourceFiles('docs')])
    for (const m of readFileSync(file, 'utf8').matchAll(/\bUE_[A-Z0-9_]*[A-Z0-9]\b/g))
      named.add(m[0])
  assert.deepEqual(
    [...named].filter((code) => !(code in CODES)),
    [],
  )
})
