import type { UploadRule } from '../admission/rules.js'
import { ANONYMOUS } from '../auth/authenticator.js'
import { isCrossSite } from '../auth/cross-site.js'
import type { Actor } from '../auth/types.js'
import { answerError } from '../shared/error-path.js'
import { shuttingDown, UeError } from '../shared/errors.js'
import { requestLogger } from '../shared/log.js'
import { messageFor } from '../shared/messages.js'
import { noMetrics } from '../shared/metrics.js'
import { requestInfo } from '../shared/request-info.js'
import { urlOf } from '../shared/request-url.js'
import { errorResponse, isValidCallback, jsonpResponse, jsonResponse } from '../shared/respond.js'
import type { FetchHandler } from '../shared/types.js'
import type { ActionDef, ActionKind } from './action-table.js'
import { aiRefusal, handleAi } from './actions/ai.js'
import { handleBase64 } from './actions/base64.js'
import { handleCatch, refuseCatchOverJsonp } from './actions/catch.js'
import { handleConfig } from './actions/config.js'
import { handleDelete } from './actions/delete.js'
import { handleList } from './actions/list.js'
import { handleUpload } from './actions/upload.js'
import { handleWordImport } from './actions/word-import.js'
import type { ActionContext, EditorDeps } from './deps.js'
import { recordAnswer } from './outcomes.js'
import { refusalDetails } from './refusal-log.js'

/** The rule of an action that stores files: each is admitted before its body is read. */
function storedRule(def: ActionDef): UploadRule | undefined {
  if (def.kind === 'wordimport') return def.rule.pictures
  return def.kind === 'upload' || def.kind === 'base64' || def.kind === 'catch'
    ? def.rule
    : undefined
}

function runAction(ctx: ActionContext, def: ActionDef): Promise<object> {
  switch (def.kind) {
    case 'config':
      return handleConfig(ctx)
    case 'upload':
      return handleUpload(ctx, def.rule)
    case 'base64':
      return handleBase64(ctx, def.rule)
    case 'list':
      return handleList(ctx, def.rule)
    case 'catch':
      return handleCatch(ctx, def.rule)
    case 'delete':
      return handleDelete(ctx)
    case 'wordimport':
      return handleWordImport(ctx, def.rule)
    case 'uploadresult':
      if (!ctx.deps.uploadResult) throw new UeError('UE_ACTION_UNKNOWN')
      return ctx.deps.uploadResult({
        id: ctx.url.searchParams.get('id') ?? '',
        actor: ctx.actor,
        log: ctx.deps.log,
      })
    default:
      throw new UeError('UE_ACTION_UNKNOWN')
  }
}

const CLOSE = { Connection: 'close' }
const READS: ReadonlySet<ActionKind> = new Set(['config', 'list', 'uploadresult'])
/** What a cookie must not authorise from another site's page: every action that changes something. */
const CHANGES: ReadonlySet<ActionKind> = new Set([
  'upload',
  'base64',
  'catch',
  'delete',
  'ai',
  'wordimport',
])
/** JSONP a cookie alone must never authorise: it reads private data or stores files. */
const PRIVATE_JSONP: ReadonlySet<ActionKind> = new Set(['list', 'catch'])

/**
 * The UEditor endpoint: routes on `?action=` only (any mount path works), answers strict JSON,
 * or JSONP for the kinds that allow it. Application errors are HTTP 200 with a readable
 * `state` unless `http.errorStatus` is 'http', because the editor only reads bodies of 200s.
 */
export function createEditorHandler(deps: EditorDeps): FetchHandler {
  const { config } = deps
  const jsonpKinds = new Set<string>(config.http.jsonpActions)
  const corsOrigins = new Set(config.http.corsOrigins)
  const metrics = deps.metrics ?? noMetrics

  return async (request) => {
    const started = performance.now()
    // Every line logged for this request, by its action or its refusal, carries its id.
    const log = requestLogger(deps.log, request)
    const url = urlOf(request)
    const actions = url.searchParams.getAll('action')
    const def = actions.length === 1 ? deps.table.get(actions[0] as string) : undefined
    const callback = url.searchParams.get('callback')
    let jsonp =
      def !== undefined && callback !== null && request.method === 'GET' && jsonpKinds.has(def.kind)
    // A JSONP catch gets a JSONP answer even when refused, or the editor retries forever.
    const jsonpCatch =
      def?.kind === 'catch' && request.method === 'GET' && isValidCallback(callback ?? '')

    // The answer of a refusal in the editor's shape: JSON or JSONP, a catch list, an AI event.
    const answer = (error: UeError): Response => {
      recordAnswer(metrics, def, started, { code: error.code })
      if (def?.kind === 'ai') return aiRefusal(error, config)
      const state = messageFor(config.locale, error.code)
      return errorResponse(error, {
        shape: 'editor',
        locale: config.locale,
        statusMode: config.http.errorStatus,
        callback: jsonp || jsonpCatch ? callback : undefined,
        // The editor reads only `list[0]` of a catch answer; without it, capture stops for good.
        fields: def?.kind === 'catch' ? { list: [{ state, code: error.code, source: '' }] } : {},
        // A refused upload's connection ends with the answer; the node bridge first reads what is
        // left of the body (within http.drainMaxBytes), so the client gets to read the answer.
        headers: request.method === 'POST' ? CLOSE : undefined,
      })
    }

    try {
      if (deps.closing?.()) throw shuttingDown()
      if (!def) throw new UeError('UE_ACTION_UNKNOWN')
      if (jsonp && !isValidCallback(callback ?? '')) throw new UeError('UE_CALLBACK_INVALID')
      // Before the body is read: a refused request stores nothing and costs no parsing.
      const principal =
        def.kind === 'config' && config.auth.publicConfig
          ? ANONYMOUS
          : await deps.auth.authenticate(request, url)
      const actor: Actor = { ...principal, address: requestInfo(request)?.remoteAddress }
      // A token in the URL is the user's own act (no page can read it): JSONP catch is allowed.
      if (jsonpCatch && principal.channel === 'query') jsonp = true
      // A cookie (the hook) rides along on any cross-site script tag: no private JSONP with it.
      const cookieJsonp =
        principal.channel === 'hook' && PRIVATE_JSONP.has(def.kind) && !config.auth.hookJsonp
      if (def.kind === 'list' && jsonp && cookieJsonp) throw new UeError('UE_FORBIDDEN')
      // A JSONP catch while it is off still gets a JSONP list, or the editor retries forever.
      if (def.kind === 'catch' && jsonpCatch && (!jsonp || cookieJsonp))
        return jsonpResponse(callback ?? '', refuseCatchOverJsonp(url, def.rule, config))
      const method = request.method === 'HEAD' ? 'GET' : request.method
      const allowed = READS.has(def.kind) || (def.kind === 'catch' && jsonp) ? 'GET' : 'POST'
      if (method !== allowed) throw new UeError('UE_METHOD_NOT_ALLOWED')
      // A cookie rides along on another site's form posts too. (A JSONP catch with a cookie
      // gets here only under auth.hookJsonp, where the hook checks a token in the URL.)
      if (
        principal.channel === 'hook' &&
        CHANGES.has(def.kind) &&
        !jsonp &&
        isCrossSite(request, url, corsOrigins)
      )
        throw new UeError('UE_CROSS_SITE')
      const actionDeps: EditorDeps = { ...deps, log }
      if (def.kind === 'ai') {
        const answer = await handleAi({ request, url, deps: actionDeps, actor })
        recordAnswer(metrics, def, started, {})
        return answer
      }
      // Admitted before the body is read: a refused flood costs no disk and no parsing.
      const rule = storedRule(def)
      const ticket = rule
        ? await deps.admission.admit(actor, { rule, signal: request.signal })
        : undefined
      let result: object
      try {
        result = await runAction({ request, url, deps: actionDeps, actor }, def)
      } finally {
        ticket?.end()
      }
      recordAnswer(metrics, def, started, { result })
      return jsonp ? jsonpResponse(callback ?? '', result) : jsonResponse(result)
    } catch (e) {
      return answerError(e, request, {
        area: 'editor',
        log: deps.log,
        count: (code) => metrics.refused('editor', code),
        details: (error) => refusalDetails(def, error, config),
        answer,
      })
    }
  }
}
