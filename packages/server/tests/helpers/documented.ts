import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

// Tests run from packages/server/dist/tests/helpers; the guides are at the repository's root.
const DOCS = fileURLToPath(new URL('../../../../../docs/', import.meta.url))

export interface FencedBlock {
  /** The fence's language (`nginx`, `ini`, `sh`, `yaml`, …), or ''. */
  lang: string
  /** The block's text, without the indentation of a block inside a list item. */
  text: string
  /** The last line of text before the block, trimmed. */
  before: string
}

/** Every fenced block of `docs/<guide>`, in order, as written. */
export function fencedBlocks(guide: string): FencedBlock[] {
  const markdown = readFileSync(join(DOCS, guide), 'utf8')
  return [...markdown.matchAll(/^( *)```([a-z]*)\n([\s\S]*?)^\1```$/gm)].map((m) => {
    const indent = (m[1] as string).length
    const text = (m[3] as string)
      .split('\n')
      .map((line) => line.slice(Math.min(indent, line.length - line.trimStart().length)))
      .join('\n')
    const before = markdown.slice(0, m.index).trimEnd().split('\n').pop()?.trim() ?? ''
    return { lang: m[2] as string, text, before }
  })
}

/** The one block of `docs/<guide>` in `lang` that holds `needle`. */
export function documentedBlock(guide: string, lang: string, needle: string): string {
  const found = fencedBlocks(guide).filter((b) => b.lang === lang && b.text.includes(needle))
  assert.equal(found.length, 1, `docs/${guide} has one \`\`\`${lang} block with "${needle}"`)
  return (found[0] as FencedBlock).text
}

/**
 * The blocks of `docs/<guide>` that the guide gives as files, by absolute path: a block right
 * after a line that names it (`` `/etc/ueditor/node-b.env`: ``), or one whose first line is a
 * comment naming it (`# /etc/ueditor/ueditor.env: …`).
 */
export function documentedFiles(guide: string): Map<string, string> {
  const files = new Map<string, string>()
  for (const b of fencedBlocks(guide)) {
    const path = /^`(\/[^`\s]+)`:$/.exec(b.before)?.[1] ?? /^# (\/[^\s:]+)(:|$)/.exec(b.text)?.[1]
    if (path === undefined) continue
    assert.ok(!files.has(path), `docs/${guide} gives the file ${path} once`)
    files.set(path, b.text)
  }
  return files
}

/** The file at `path` as `docs/<guide>` gives it. */
export function documentedFile(guide: string, path: string): string {
  const text = documentedFiles(guide).get(path)
  assert.ok(text !== undefined, `docs/${guide} gives the file ${path}`)
  return text
}
