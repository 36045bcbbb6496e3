import { DIRECT_URL_KEY } from './direct-url.js'
import { EDITOR_DEFAULTS, EDITOR_OPTION_NAMES } from './editor-defaults.js'
import { EditorConfigSchema } from './schema.js'
import { closest } from './suggest.js'

/** Keys the server knows in `editor`: the protocol keys, and UEditor options it passes on. */
const KNOWN = new Set<string>([
  ...Object.keys(EditorConfigSchema.shape),
  ...Object.keys(EDITOR_DEFAULTS),
  ...EDITOR_OPTION_NAMES,
  'imageConfig',
  // UEditor Plus's AI dialog options; with the relay on the server fills them in itself.
  'ai',
  // Filled in by the server itself while direct uploads are served.
  DIRECT_URL_KEY,
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
      const suggestion = closest(key, KNOWN)
      const hint = suggestion ? ` (did you mean \`${suggestion}\`?)` : ''
      return {
        key,
        ...(suggestion ? { suggestion } : {}),
        message: `unknown editor key \`${key}\`${hint}: it is passed to the browser as is; list it in \`editorExtraKeys\` if it is deliberate`,
      }
    })
}
