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
    return { lang: m[2] as string, text }
  })
}

/** The one block of `docs/<guide>` in `lang` that holds `needle`. */
export function documentedBlock(guide: string, lang: string, needle: string): string {
  const found = fencedBlocks(guide).filter((b) => b.lang === lang && b.text.includes(needle))
  assert.equal(found.length, 1, `docs/${guide} has one \`\`\`${lang} block with "${needle}"`)
  return (found[0] as FencedBlock).text
}
