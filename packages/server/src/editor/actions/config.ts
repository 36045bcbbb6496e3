import { publicEditorConfig } from '../../config/public.js'
import { SerialisedJson } from '../../shared/respond.js'
import type { ActionContext } from '../deps.js'

const cache = new WeakMap<object, SerialisedJson>()

/** `action=config`: the complete public key set, built and serialised once per config object. */
export async function handleConfig(ctx: ActionContext): Promise<SerialisedJson> {
  const editor = ctx.deps.config.editor
  let body = cache.get(editor)
  if (!body) {
    body = new SerialisedJson(publicEditorConfig(editor))
    cache.set(editor, body)
  }
  return body
}
