import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { isDeepStrictEqual } from 'node:util'
import { SERVER_ONLY_EDITOR_KEYS } from '../src/config/editor-defaults.js'
import { startTestServer } from './helpers/start-server.js'
import { test } from './helpers/test.js'

const repoFile = (path: string) =>
  readFileSync(fileURLToPath(new URL(`../../../../${path}`, import.meta.url)), 'utf8')

/** The `| key | default |` rows of the "Editor keys" section, key → default cell. */
function documentedDefaults(doc: string): Map<string, string> {
  const section = doc.split(/^## /m).find((s) => s.startsWith('Editor keys'))
  assert.ok(section, 'docs/config.md has no "Editor keys" section')
  const rows = new Map<string, string>()
  for (const m of section.matchAll(/^\| `(\w+)` \| (.*) \|$/gm))
    rows.set(m[1] as string, m[2] as string)
  return rows
}

/**
 * What a default cell says, read the way a user reads it: the code spans before any remark in
 * parentheses. One span is a JSON value (`2048000`, `""`, `["127.0.0.1", "localhost"]`) or a
 * word (`image`); spans of dotted extensions and names of other keys (whose lists they stand
 * for) make one list together.
 */
function documentedValue(cell: string, rows: Map<string, string>): unknown {
  const head = cell.split(' (')[0] as string
  const spans = [...head.matchAll(/`([^`]*)`/g)].map((m) => m[1] as string)
  assert.ok(spans.length > 0, `no value in "${cell}"`)
  const isList = spans.every((s) => /^(\.[a-z0-9]+ ?)+$/.test(s) || rows.has(s))
  if (isList && spans.some((s) => s.startsWith('.')))
    return spans.flatMap((s) =>
      rows.has(s) ? (documentedValue(rows.get(s) as string, rows) as string[]) : s.split(' '),
    )
  if (spans.length === 1 && rows.has(spans[0] as string) && head.startsWith('same as'))
    return documentedValue(rows.get(spans[0] as string) as string, rows)
  const span = spans[0] as string
  try {
    return JSON.parse(span)
  } catch {
    return span
  }
}

const sorted = (v: unknown) => (Array.isArray(v) ? [...v].sort() : v)

test('the editor-key defaults in docs/config.md are what the config answer sends', async (t) => {
  // The documented defaults; LibreOffice, where installed, adds the Word picture types (below).
  const srv = await startTestServer(t, { images: { metafiles: { enabled: false } } })
  const answer = (await (await fetch(srv.action('config'))).json()) as Record<string, unknown>
  const rows = documentedDefaults(repoFile('docs/config.md'))
  const serverOnly = new Set<string>(SERVER_ONLY_EDITOR_KEYS)
  assert.deepEqual(
    [...rows.keys()].filter((k) => !serverOnly.has(k)).sort(),
    Object.keys(answer).sort(),
    'the table lists exactly the keys of the answer, plus the server-only *PathFormat keys',
  )
  const drift: string[] = []
  for (const [key, cell] of rows) {
    const sent = serverOnly.has(key) ? srv.ue.config.editor[key] : answer[key]
    if (!isDeepStrictEqual(sorted(documentedValue(cell, rows)), sorted(sent)))
      drift.push(`${key}: docs/config.md says ${cell}, the server sends ${JSON.stringify(sent)}`)
  }
  assert.deepEqual(drift, [])
})
