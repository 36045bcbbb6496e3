import { isLoopbackHost } from '../../auth/loopback.js'
import type { ServerConfig } from '../../config/load.js'
import { UeError } from '../../shared/errors.js'
import { errorResponse } from '../../shared/respond.js'
import type { ActionContext } from '../deps.js'

/**
 * The AI action: a signed-in user, or anybody on loopback in auth mode none (development), gets
 * the relay's SSE stream. The model key stays with the relay; the caller's credential was
 * checked by the auth layer before we got here.
 */
export async function handleAi(ctx: ActionContext): Promise<Response> {
  const { deps, actor, request } = ctx
  if (!deps.ai) throw new UeError('UE_ACTION_UNKNOWN')
  if (actor.user === null && !(actor.address !== undefined && isLoopbackHost(actor.address))) {
    deps.log.warn(
      { audit: 'ai', outcome: 'UE_UNAUTHORIZED', address: actor.address, reason: 'anonymous' },
      'ai call',
    )
    throw new UeError('UE_UNAUTHORIZED', { detail: 'AI needs a signed-in user off loopback' })
  }
  return deps.ai.handle(request, { user: actor.user, address: actor.address })
}

const AUTH_CODES = new Set(['UE_UNAUTHORIZED', 'UE_FORBIDDEN', 'UE_AUTH_THROTTLED'])

/**
 * A refusal before the stream starts, as one SSE `error` event the dialog shows. Auth refusals
 * keep their real status (401, 403, 429) so a missing credential is plain to any client; the
 * rest are HTTP 200 like every editor refusal, unless `http.errorStatus` is `http`.
 */
export function aiRefusal(error: UeError, config: ServerConfig): Response {
  const real = config.http.errorStatus === 'http' || AUTH_CODES.has(error.code)
  return errorResponse(error, {
    shape: 'event',
    locale: config.locale,
    statusMode: real ? 'http' : 'protocol',
    // Part of the body may still be unread; closing is cheaper than draining it.
    headers: error.status === 401 ? CLOSE_CHALLENGE : CLOSE,
  })
}

const CLOSE = { Connection: 'close' }
const CLOSE_CHALLENGE = { ...CLOSE, 'WWW-Authenticate': 'Bearer' }
