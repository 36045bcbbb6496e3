import { UeError } from '../shared/errors.js'
import { requestLogger } from '../shared/log.js'
import type { Logger } from '../shared/types.js'
import type { ResolvedMode } from './mode.js'

/** What an operator sets to let requests in; the refusal's log line and the banner say it. */
export const AUTH_SETTINGS_HINT =
  'set UEDITOR_AUTH_TOKENS, UEDITOR_AUTH_JWT_SECRET or UEDITOR_AUTH_JWKS_URL (docs/auth.md), ' +
  'or UEDITOR_AUTH=none (auth.mode: none) to let anyone who can reach the server in on purpose'

/** Mode none that nobody chose: no auth setting at all, neither `auth.mode` nor a credential. */
export function isUnconfigured(mode: ResolvedMode): boolean {
  return mode.mode === 'none' && !mode.explicit
}

/**
 * Anonymous use is a choice, never the default: a server whose mode none was only inferred
 * refuses every request that would act anonymously. Its address proves nothing, since a
 * reverse proxy on the same machine makes every visitor a loopback caller and need not say
 * so. The first refusal is logged at warn with the fix.
 */
export function unconfiguredGuard(mode: ResolvedMode, log: Logger): (request: Request) => void {
  if (!isUnconfigured(mode)) return () => {}
  let warned = false
  return (request) => {
    if (!warned) {
      warned = true
      requestLogger(log, request).warn(
        {},
        `a request was refused because no authentication is configured (UE_AUTH_NOT_CONFIGURED); ${AUTH_SETTINGS_HINT}`,
      )
    }
    throw new UeError('UE_AUTH_NOT_CONFIGURED')
  }
}
