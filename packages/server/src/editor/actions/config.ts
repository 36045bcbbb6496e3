import { publicEditorConfig } from '../../config/public.js'
import { SerialisedJson } from '../../shared/respond.js'
import type { ActionContext } from '../deps.js'

const cache = new WeakMap<object, SerialisedJson>()

/** `action=config`: the complete public key set, built and serialised once per config object. */
export async function handleConfig(ctx: ActionContext): Promise<SerialisedJson> {
  const { config } = ctx.deps
  let body = cache.get(config)
  if (!body) {
    body = new SerialisedJson(publicEditorConfig(config))
    cache.set(config, body)
  }
  return body
}
