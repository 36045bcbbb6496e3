import { publicEditorConfig } from '../../config/public.js'
import { SerialisedJson } from '../../shared/respond.js'
import type { ActionContext } from '../deps.js'

interface Answers {
  full: SerialisedJson
  /** The JSONP answer while a JSONP catch would be refused: capture off. */
  withoutCapture?: SerialisedJson
}

const cache = new WeakMap<object, Answers>()

/**
 * `action=config`: the complete public key set, built and serialised once per config object.
 * Over JSONP (a page on another origin), the editor would send `catch` as JSONP too; when that
 * would be refused, the answer turns capture off, or the editor would replace every pasted
 * remote picture with its broken-image picture.
 */
export async function handleConfig(ctx: ActionContext): Promise<SerialisedJson> {
  const { config } = ctx.deps
  let answers = cache.get(config)
  if (!answers) {
    answers = { full: new SerialisedJson(publicEditorConfig(config)) }
    cache.set(config, answers)
  }
  if (!overJsonp(ctx) || catchAnsweredOverJsonp(ctx)) return answers.full
  answers.withoutCapture ??= new SerialisedJson(withoutCapture(publicEditorConfig(config)))
  return answers.withoutCapture
}

/**
 * Capture off, in the two ways editors read it. `catchRemoteImageEnable` is read by UEditor
 * Plus only when the editor starts, often before this answer arrives; `catcherLocalDomain` is
 * read again once it has. An image is left alone when its URL contains an entry, and every URL
 * the editor would send (`http:`, `https:`, `ftp:`) contains `:`.
 */
export function withoutCapture(answer: Record<string, unknown>): Record<string, unknown> {
  const local = Array.isArray(answer.catcherLocalDomain) ? answer.catcherLocalDomain : []
  return { ...answer, catchRemoteImageEnable: false, catcherLocalDomain: [...local, ':'] }
}

/** Answered as JSONP: what the dispatcher decides for a config request. */
function overJsonp(ctx: ActionContext): boolean {
  return (
    ctx.request.method === 'GET' &&
    ctx.url.searchParams.get('callback') !== null &&
    ctx.deps.config.http.jsonpActions.includes('config')
  )
}

/**
 * Whether the editor's JSONP catch, sent to the same `serverUrl` (so with the same query) and
 * the same cookies, would be answered. A script tag carries no header: its credential is a
 * token in the query (tokens and JWT modes), a cookie through the hook, or none in mode none.
 * A query token authorises a JSONP catch by itself; otherwise it needs `catch` in
 * `http.jsonpActions`, and with the hook also `auth.hookJsonp`.
 */
function catchAnsweredOverJsonp(ctx: ActionContext): boolean {
  const { config, auth } = ctx.deps
  const param = config.auth.queryParam
  const readsTokens = auth.mode === 'tokens' || auth.mode === 'jwt'
  if (readsTokens && param && ctx.url.searchParams.get(param)) return true
  if (!config.http.jsonpActions.includes('catch')) return false
  return auth.mode === 'none' || (auth.mode === 'hook' && config.auth.hookJsonp)
}
