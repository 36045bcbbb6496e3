import { SERVER_ONLY_EDITOR_KEYS } from './editor-defaults.js'
import type { EditorConfig } from './schema.js'

/** The `action=config` body: every editor key except the backend-only ones. Never secrets. */
export function publicEditorConfig(editor: EditorConfig): Record<string, unknown> {
  const hidden = new Set<string>(SERVER_ONLY_EDITOR_KEYS)
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(editor)) if (!hidden.has(key)) out[key] = value
  return out
}
