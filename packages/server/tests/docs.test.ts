import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { EDITOR_DEFAULTS } from '../src/config/editor-defaults.js'
import { ENV_VARS } from '../src/config/load.js'
import { CODES } from '../src/shared/errors.js'

const repoFile = (path: string) =>
  readFileSync(fileURLToPath(new URL(`../../../../${path}`, import.meta.url)), 'utf8')

test('docs/config.md documents every environment variable and every editor key', () => {
  const doc = repoFile('docs/config.md')
  for (const v of ENV_VARS) assert.ok(doc.includes(`\`${v.name}\``), v.name)
  for (const key of Object.keys(EDITOR_DEFAULTS)) assert.ok(doc.includes(`\`${key}\``), key)
})

test('docs/errors.md has one heading per error code', () => {
  const doc = repoFile('docs/errors.md')
  for (const code of Object.keys(CODES)) assert.ok(doc.includes(`\n## ${code}\n`), code)
})
