import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { EDITOR_DEFAULTS } from '../src/config/editor-defaults.js'
import { ENV_VARS } from '../src/config/env-vars.js'
import { CODES } from '../src/shared/errors.js'

const repoPath = (path: string) => fileURLToPath(new URL(`../../../../${path}`, import.meta.url))
const repoFile = (path: string) => readFileSync(repoPath(path), 'utf8')
const sourceFiles = (dir: string) =>
  readdirSync(repoPath(dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(ts|md)$/.test(f))
    .map((f) => join(repoPath(dir), f))

test('docs/config.md documents every environment variable and every editor key', () => {
  const doc = repoFile('docs/config.md')
  for (const v of ENV_VARS) assert.ok(doc.includes(`\`${v.name}\``), v.name)
  for (const key of Object.keys(EDITOR_DEFAULTS)) assert.ok(doc.includes(`\`${key}\``), key)
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
