import { isPlainObject } from '../shared/plain-object.js'
import { serverBase } from './formula-url.js'
import type { ParsedServerConfig } from './schema.js'

type Editor = ParsedServerConfig['editor']

/** Whether the AI relay is configured (all of baseUrl, apiKey and model). */
export function aiEnabled(cfg: Pick<ParsedServerConfig, 'ai'>): boolean {
  return cfg.ai.baseUrl !== undefined && cfg.ai.apiKey !== undefined && cfg.ai.model !== undefined
}

/**
 * With AI on, `config` tells the dialog where to post (`ai.driver`, `ai.driverConfig.url`) and
 * nothing else. The client deep-merges the server's config over the page's options, so the
 * page keeps its own `driverConfig.key` (the user's editor credential) and every other key.
 */
export function withAiDriver(editor: Editor, cfg: ParsedServerConfig): Editor {
  if (!aiEnabled(cfg)) return editor
  const url = cfg.ai.url ?? `${serverBase(cfg)}${cfg.routes.editor}?action=${cfg.ai.actionName}`
  return { ...editor, ai: { driver: cfg.ai.driver, driverConfig: { url } } }
}

/**
 * The editor section is sent to every browser: a model key put into `editor.ai` by mistake
 * would be handed to every reader of the page, so it is refused.
 */
export function pageKeyProblems(input: unknown): string[] {
  const editor = isPlainObject(input) ? input.editor : undefined
  const ai = isPlainObject(editor) ? editor.ai : undefined
  if (!isPlainObject(ai)) return []
  const driverConfig = ai.driverConfig
  if (isPlainObject(driverConfig) && 'key' in driverConfig)
    return [
      'editor.ai.driverConfig.key: the editor section goes to every browser; set the model key as ai.apiKey (UEDITOR_AI_API_KEY) instead',
    ]
  return []
}
