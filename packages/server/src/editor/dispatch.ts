import { isUeError, UeError } from '../shared/errors.js'
import { messageFor } from '../shared/messages.js'
import { requestInfo } from '../shared/request-info.js'
import type { FetchHandler } from '../shared/types.js'
import type { ActionDef, ActionKind } from './action-table.js'
import { handleBase64 } from './actions/base64.js'
import { handleCatch, refuseCatchOverJsonp } from './actions/catch.js'
import { handleConfig } from './actions/config.js'
import { handleList } from './actions/list.js'
import { handleUpload } from './actions/upload.js'
import type { ActionContext, EditorDeps } from './deps.js'
import { createUploadGate } from './limits.js'
import { refusalDetails } from './refusal-log.js'
import { isValidCallback, jsonpResponse, jsonResponse } from './respond.js'

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
    default:
      throw new UeError('UE_ACTION_UNKNOWN')
  }
}

const READS: ReadonlySet<ActionKind> = new Set(['config', 'list'])
const WRITES: ReadonlySet<ActionKind> = new Set(['upload', 'base64', 'catch'])

/**
 * The UEditor endpoint: routes on `?action=` only (any mount path works), answers strict JSON,
 * or JSONP for the kinds that allow it. Application errors are HTTP 200 with a readable
 * `state` unless `http.errorStatus` is 'http', because the editor only reads bodies of 200s.
 */
export function createEditorHandler(deps: EditorDeps): FetchHandler {
  const { config, log } = deps
  const jsonpKinds = new Set<string>(config.http.jsonpActions)
  // With remote storage the only local volume an upload fills is the temp spool.
  const storageRoot =
    config.storage.driver === 'local' ? config.storage.root : config.uploads.tempDir
  const gate = createUploadGate({ ...config.limits, storageRoot })

  return async (request) => {
    const url = new URL(request.url)
    const actions = url.searchParams.getAll('action')
    const def = actions.length === 1 ? deps.table.get(actions[0] as string) : undefined
    const callback = url.searchParams.get('callback')
    const jsonp =
      def !== undefined && callback !== null && request.method === 'GET' && jsonpKinds.has(def.kind)

    const fail = (error: UeError): Response => {
      const state = messageFor(config.locale, error.code)
      const body: Record<string, unknown> = { state, code: error.code }
      // The editor reads only `list[0]` of a catch answer; without it, capture stops for good.
      if (def?.kind === 'catch') body.list = [{ state, code: error.code, source: '' }]
      if (jsonp && isValidCallback(callback ?? '')) return jsonpResponse(callback ?? '', body)
      const status = config.http.errorStatus === 'http' ? error.status : 200
      // Part of the body may still be unread; closing is cheaper than draining it.
      const headers: HeadersInit = request.method === 'POST' ? { Connection: 'close' } : {}
      return jsonResponse(body, status, headers)
    }

    try {
      if (!def) throw new UeError('UE_ACTION_UNKNOWN')
      if (jsonp && !isValidCallback(callback ?? '')) throw new UeError('UE_CALLBACK_INVALID')
      // A JSONP catch while it is off still gets a JSONP list, or the editor retries forever.
      if (
        def.kind === 'catch' &&
        !jsonp &&
        request.method === 'GET' &&
        isValidCallback(callback ?? '')
      )
        return jsonpResponse(callback ?? '', refuseCatchOverJsonp(url, def.rule, config))
      const method = request.method === 'HEAD' ? 'GET' : request.method
      const allowed = READS.has(def.kind) || (def.kind === 'catch' && jsonp) ? 'GET' : 'POST'
      if (method !== allowed) throw new UeError('UE_METHOD_NOT_ALLOWED')
      // Admitted before the body is read: a refused flood costs no disk and no parsing.
      const release = WRITES.has(def.kind)
        ? await gate.admit(requestInfo(request)?.remoteAddress)
        : undefined
      let result: object
      try {
        result = await runAction({ request, url, deps }, def)
      } finally {
        release?.()
      }
      return jsonp ? jsonpResponse(callback ?? '', result) : jsonResponse(result)
    } catch (e) {
      if (isUeError(e)) {
        if (e.status >= 500) log.error({ err: e, cause: e.cause }, 'editor action failed')
        else log.debug(refusalDetails(def, e, config), 'editor request refused')
        return fail(e)
      }
      log.error({ err: e, action: def?.name }, 'unexpected error in editor action')
      return fail(new UeError('UE_INTERNAL', { cause: e }))
    }
  }
}
