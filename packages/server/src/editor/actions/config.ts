import { publicEditorConfig } from '../../config/public.js'
import type { ActionContext } from '../deps.js'

const cache = new WeakMap<object, Record<string, unknown>>()

/** `action=config`: the complete public key set, computed once per config object. */
export async function handleConfig(ctx: ActionContext): Promise<Record<string, unknown>> {
  const editor = ctx.deps.config.editor
  let body = cache.get(editor)
  if (!body) {
    body = publicEditorConfig(editor)
    cache.set(editor, body)
  }
  return body
}
