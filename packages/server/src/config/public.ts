import { SERVER_ONLY_EDITOR_KEYS } from './editor-defaults.js'
import { browserLocalDomains } from './local-domains.js'
import type { ParsedServerConfig } from './schema.js'
import { uploadUrls } from './upload-urls.js'

/**
 * The `action=config` body: every editor key except the backend-only ones. Never secrets.
 * `catcherLocalDomain` is the browser's version of the list (see `browserLocalDomains`), and
 * the URLs of the other ways to upload follow the editor's keys (`uploadUrls`).
 */
export function publicEditorConfig(
  config: Pick<ParsedServerConfig, 'editor' | 'catcher' | 'http' | 'tus' | 'routes' | 'publicUrl'>,
): Record<string, unknown> {
  const hidden = new Set<string>(SERVER_ONLY_EDITOR_KEYS)
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(config.editor)) if (!hidden.has(key)) out[key] = value
  out.catcherLocalDomain = browserLocalDomains(
    config.editor.catcherLocalDomain,
    config.catcher.allowHosts,
    config.http.port,
  )
  Object.assign(out, uploadUrls(config))
  return out
}
