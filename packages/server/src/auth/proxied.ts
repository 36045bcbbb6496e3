import { UeError } from '../shared/errors.js'
import { requestLogger } from '../shared/log.js'
import type { Logger } from '../shared/types.js'
import { isLoopbackHost } from './loopback.js'
import type { ResolvedMode } from './mode.js'

const FORWARDING_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip'] as const

/**
 * What shows that a request came through a reverse proxy: a forwarding header, or a `Host` that
 * is not a loopback name (a proxy passes the site's name, or its upstream's). Null for a request
 * made straight to a loopback address, as on a first run.
 */
export function proxySign(headers: Headers): string | null {
  for (const name of FORWARDING_HEADERS) if (headers.has(name)) return name
  const host = headers.get('host')
  if (host !== null && !isLoopbackHost(hostnameOf(host))) return 'host'
  return null
}

function hostnameOf(host: string): string {
  try {
    return new URL(`http://${host}`).hostname
  } catch {
    return host
  }
}

/**
 * Without auth the server is meant for this machine only, and a loopback bind is no guard once a
 * proxy on the same machine forwards the world to it: every request would come from the proxy's
 * loopback address. So when mode none was not chosen (`UEDITOR_AUTH=none`), a request that shows
 * a proxy is refused. The first such refusal is logged at warn with the fix.
 */
export function proxiedWithoutAuthGuard(
  mode: ResolvedMode,
  log: Logger,
): (request: Request) => void {
  if (mode.mode !== 'none' || mode.explicit) return () => {}
  let warned = false
  return (request) => {
    const sign = proxySign(request.headers)
    if (sign === null) return
    if (!warned) {
      warned = true
      requestLogger(log, request).warn(
        { sign },
        'a request came through a proxy but no authentication is configured, so it was ' +
          'refused (UE_PROXY_WITHOUT_AUTH); set UEDITOR_AUTH_TOKENS, UEDITOR_AUTH_JWT_SECRET or ' +
          'UEDITOR_AUTH_JWKS_URL (docs/auth.md), or UEDITOR_AUTH=none to let anyone in on purpose',
      )
    }
    throw new UeError('UE_PROXY_WITHOUT_AUTH', { detail: `seen: ${sign}` })
  }
}
