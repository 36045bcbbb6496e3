import type { Authenticator } from '../auth/authenticator.js'
import { isCrossSite } from '../auth/cross-site.js'
import { isLoopbackHost } from '../auth/loopback.js'
import { isUeError, UeError } from '../shared/errors.js'
import { requestInfo } from '../shared/request-info.js'
import { urlOf } from '../shared/request-url.js'

/** `admin` implies `read`. */
export type Scope = 'read' | 'admin'

/** Resolves when the request may go on; throws its refusal (`WWW-Authenticate` with it) else. */
export type Authorize = (request: Request, scope: Scope) => Promise<void>

const REALM = 'Bearer realm="materials"'

/**
 * The materials API on the shared auth layer: any signed-in user (or a materials read token)
 * may read, writes need admin (an admin user, or a materials admin token). Without a
 * credential, reads are public only when `publicReads` holds and the peer is on this machine.
 * A write authorised by the hook (a cookie) is refused when another site's page sent it.
 */
export function createMaterialsAuth(o: {
  authenticator: Authenticator
  publicReads: boolean
  corsOrigins: readonly string[]
}): Authorize {
  const corsOrigins = new Set(o.corsOrigins)
  return async (request, scope) => {
    let principal: Awaited<ReturnType<Authenticator['authenticate']>>
    try {
      principal = await o.authenticator.authenticate(request)
    } catch (e) {
      if (!isUeError(e)) throw e
      if (e.code === 'UE_AUTH_THROTTLED')
        throw new UeError(e.code, { detail: e.detail, headers: { 'Retry-After': '60' } })
      if (e.code === 'UE_AUTH_NOT_CONFIGURED') throw e
      throw refusal(
        'UE_UNAUTHORIZED',
        e.detail === 'missing' ? REALM : `${REALM}, error="invalid_token"`,
      )
    }
    if (principal.channel === 'none') {
      if (scope === 'read' && o.publicReads && peerIsLoopback(request)) return
      throw refusal('UE_UNAUTHORIZED', REALM)
    }
    if (scope === 'admin' && !principal.admin)
      throw refusal('UE_FORBIDDEN', `${REALM}, error="insufficient_scope", scope="admin"`)
    const writes = request.method !== 'GET' && request.method !== 'HEAD'
    if (
      scope === 'admin' &&
      writes &&
      principal.channel === 'hook' &&
      isCrossSite(request, urlOf(request), corsOrigins)
    )
      throw new UeError('UE_CROSS_SITE')
  }
}

function refusal(code: 'UE_UNAUTHORIZED' | 'UE_FORBIDDEN', challenge: string): UeError {
  return new UeError(code, { headers: { 'WWW-Authenticate': challenge } })
}

/** When the adapter knows the peer (node:http), it must be on this machine too. */
function peerIsLoopback(request: Request): boolean {
  const peer = requestInfo(request)?.remoteAddress
  return peer === undefined || isLoopbackHost(peer)
}
