import { EDITOR_DEFAULTS, EDITOR_OPTION_NAMES } from './editor-defaults.js'
import { EditorConfigSchema } from './schema.js'

/** Keys the server knows in `editor`: the protocol keys, and UEditor options it passes on. */
const KNOWN = new Set<string>([
  ...Object.keys(EditorConfigSchema.shape),
  ...Object.keys(EDITOR_DEFAULTS),
  ...EDITOR_OPTION_NAMES,
  'imageConfig',
])

export interface UnknownEditorKey {
  key: string
  /** The closest known key, when one is close enough to be a likely typo. */
  suggestion?: string
  message: string
}

/**
 * Keys in `editor` that the server does not know and that are not listed in
 * `editorExtraKeys`. They are still forwarded to the browser (custom UEditor options are
 * legitimate), but a typo such as `imageMaxSzie` would otherwise silently leave the limit at
 * its default.
 */
export function unknownEditorKeys(
  editor: Record<string, unknown>,
  extras: readonly string[] = [],
): UnknownEditorKey[] {
  const allowed = new Set(extras)
  return Object.keys(editor)
    .filter((key) => !KNOWN.has(key) && !allowed.has(key))
    .map((key) => {
      const suggestion = nearest(key)
      const hint = suggestion ? ` (did you mean \`${suggestion}\`?)` : ''
      return {
        key,
        ...(suggestion ? { suggestion } : {}),
        message: `unknown editor key \`${key}\`${hint}: it is passed to the browser as is; list it in \`editorExtraKeys\` if it is deliberate`,
      }
    })
}

function nearest(key: string): string | undefined {
  const lower = key.toLowerCase()
  let best: string | undefined
  let bestDistance = Number.POSITIVE_INFINITY
  for (const known of KNOWN) {
    const d = distance(lower, known.toLowerCase())
    if (d < bestDistance) {
      best = known
      bestDistance = d
    }
  }
  // Close enough to be the same word mistyped: a few edits, scaled with the length.
  return bestDistance <= Math.max(2, Math.floor(key.length / 4)) ? best : undefined
}

/** Optimal string alignment distance: insertions, deletions, substitutions, adjacent swaps. */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  )
  const at = (i: number, j: number) => d[i]?.[j] ?? 0
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let v = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, at(i - 2, j - 2) + 1)
      ;(d[i] as number[])[j] = v
    }
  }
  return at(a.length, b.length)
}
