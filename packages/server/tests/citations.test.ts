import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, test } from './helpers/test.js'

// Comments, messages, tests and docs may cite only documents that are in this repository, and
// docs/security.md may name only tests that exist. Tests run from packages/server/dist/tests.
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url))
const SELF = 'packages/server/tests/citations.test.ts'
const SCANNED = /\.(ts|mts|mjs|js|md|html|sh)$/

function projectFiles(): string[] {
  const out: string[] = ['README.md', 'CHANGELOG.md', '.ci/run']
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      if (['node_modules', 'dist', '.git'].includes(entry.name)) continue
      const rel = `${dir}/${entry.name}`
      if (entry.isDirectory()) walk(rel)
      else if (SCANNED.test(entry.name) && rel !== SELF) out.push(rel)
    }
  }
  for (const dir of ['docs', 'packages', 'examples', 'scripts', '.ci']) walk(dir)
  return out
}

interface SecurityRow {
  id: string
  /** Test file (relative to packages/server/tests) → titles named in the row. */
  proofs: Map<string, string[]>
}

/** The rows of docs/security.md's tables: `| S12 | attack | defence | proofs |`. */
export function parseSecurityRows(markdown: string): SecurityRow[] {
  const rows: SecurityRow[] = []
  for (const line of markdown.split('\n')) {
    const m = /^\| (S\d+) \|/.exec(line)
    if (!m) continue
    const cells = line.split(' | ')
    const last = (cells[cells.length - 1] ?? '').replace(/\s*\|\s*$/, '')
    const proofs = new Map<string, string[]>()
    // `file.test.ts` "title", "title"; `other.test.ts` "title"
    for (const part of last.split(/(?=`[\w/.-]+\.test\.ts`)/)) {
      const file = /^`([\w/.-]+\.test\.ts)`/.exec(part)?.[1]
      if (!file) continue
      const titles = [...part.matchAll(/"([^"]+)"/g)].map((t) => t[1] as string)
      proofs.set(file, [...(proofs.get(file) ?? []), ...titles])
    }
    rows.push({ id: m[1] as string, proofs })
  }
  return rows
}

/** Problems with one file's citations; `exists` answers whether a repository path exists. */
export function citationProblems(
  file: string,
  text: string,
  rowIds: ReadonlySet<string>,
  exists: (path: string) => boolean,
): string[] {
  const problems: string[] = []
  const lines = text.split('\n')
  lines.forEach((line, i) => {
    const at = `${file}:${i + 1}`
    if (line.includes('§')) problems.push(`${at} cites a section sign: ${line.trim()}`)
    if (/\bspec(?:'s)?\s+(?:section|§|\(section)/i.test(line) || /\(spec[\s)]/.test(line))
      problems.push(`${at} cites the spec: ${line.trim()}`)
    if (/(?:\.\.\/)+shared\/(?!.*\.(?:js|ts)['"])|shared\/(?:docs|spec)\//.test(line))
      problems.push(`${at} cites a document outside the repository: ${line.trim()}`)
    if (
      /\.md\W{0,3}\s*A\d{1,2}\b|^\s*(?:describe|test)\('A\d{1,2}:|\b(?:rows? |const |let )A\d{1,2}\b/.test(
        line,
      )
    )
      problems.push(`${at} cites a catalogue row that is not ours: ${line.trim()}`)
    for (const m of line.matchAll(/[\w./:#-]*\.md\b/g)) {
      const token = (m[0] as string).replace(/#.*$/, '')
      if (token.includes('://') || token === '.md') continue
      const candidates = [
        join(dirname(file), token),
        token,
        `docs/${token.replace(/^\.\//, '')}`,
        `packages/server/${token}`,
      ]
      if (!candidates.some((c) => exists(c))) problems.push(`${at} cites missing ${token}`)
    }
    const rowRefs = [
      ...line.matchAll(/\brows? (S\d+(?:(?:, | and )S\d+)*)/g),
      ...line.matchAll(/^\s*(?:describe|test)\('(S\d+):/g),
    ]
    for (const ref of rowRefs)
      for (const id of (ref[1] as string).split(/, | and /))
        if (!rowIds.has(id))
          problems.push(`${at} cites docs/security.md row ${id}, which is missing`)
  })
  return problems
}

const exists = (path: string) => existsSync(join(ROOT, path))
const security = readFileSync(join(ROOT, 'docs/security.md'), 'utf8')
const rows = parseSecurityRows(security)
const rowIds = new Set(rows.map((r) => r.id))

describe('citations', () => {
  test('comments, messages, tests and docs cite only documents and rows in the repository', () => {
    const problems = projectFiles().flatMap((f) =>
      citationProblems(f, readFileSync(join(ROOT, f), 'utf8'), rowIds, exists),
    )
    assert.deepEqual(problems, [])
  })

  test('the checker catches citations of documents that are not here', () => {
    // Spelled in pieces so that this file does not itself read as such a citation.
    const spec = ['spec', '§4.3'].join(' ')
    const outside = ['..', 'shared', 'docs', 'security.md'].join('/')
    const bad = [
      '// Upload flood guards (security.md A36)',
      "message: 'would replace it (protocol.md §1.1)'",
      `/** \`{items, total}\` of ${spec} */`,
      `see ${outside}`,
      'read docs/operations-guide.md first',
      '(docs/security.md, row S999)',
      "describe('A36: upload floods', () => {",
      'const A37 = [',
      '// the payloads of row A37',
    ]
    const found = bad.map((line) => citationProblems('x.ts', line, rowIds, exists).length > 0)
    assert.deepEqual(
      found,
      bad.map(() => true),
    )
    assert.deepEqual(
      citationProblems(
        'x.ts',
        "import { UeError } from '../shared/errors.js' // docs/security.md, row S1",
        rowIds,
        exists,
      ),
      [],
    )
  })

  test('docs/security.md has unique rows in order, each naming tests that exist', () => {
    assert.ok(rows.length >= 30, `only ${rows.length} rows`)
    assert.deepEqual(
      rows.map((r) => r.id),
      rows.map((_, i) => `S${i + 1}`),
    )
    const missing: string[] = []
    for (const row of rows) {
      if (row.proofs.size === 0) missing.push(`${row.id} names no test`)
      for (const [file, titles] of row.proofs) {
        const path = join(ROOT, 'packages/server/tests', file)
        if (!existsSync(path)) {
          missing.push(`${row.id}: ${file} does not exist`)
          continue
        }
        const source = readFileSync(path, 'utf8')
        if (titles.length === 0) missing.push(`${row.id}: no title named for ${file}`)
        for (const title of titles)
          if (![`'${title}'`, `"${title}"`, `\`${title}\``].some((q) => source.includes(q)))
            missing.push(`${row.id}: ${file} has no test "${title}"`)
      }
    }
    assert.deepEqual(missing, [])
  })

  test('the row parser reads files and titles from the proof column', () => {
    const [row] = parseSecurityRows(
      '| S1 | a | b | `security/x.test.ts` "one", "two"; `http/y.test.ts` "three" |',
    )
    assert.deepEqual(
      [...(row?.proofs ?? [])],
      [
        ['security/x.test.ts', ['one', 'two']],
        ['http/y.test.ts', ['three']],
      ],
    )
  })
})
