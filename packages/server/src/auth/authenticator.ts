import type { ServerConfig } from '../config/load.js'
import { UeError } from '../shared/errors.js'
import { realObjectOf } from '../shared/lazy-web-object.js'
import { requestLogger } from '../shared/log.js'
import { requestInfo } from '../shared/request-info.js'
import { urlOf } from '../shared/request-url.js'
import type { Logger } from '../shared/types.js'
import { presentedCredential } from './credentials.js'
import { jwtVerifier } from './jwt.js'
import type { ResolvedMode } from './mode.js'
import { type TokenEntry, tokenTable, userTokens } from './static-tokens.js'
import type { FailureThrottle } from './throttle.js'
import type { AuthMode, AuthorizeHook, Grant, Principal } from './types.js'

/** What every authenticator of one server shares: settings, mode, hook, failure throttle. */
export interface AuthSetup {
  settings: ServerConfig['auth']
  mode: ResolvedMode
  hook?: AuthorizeHook | undefined
  throttle: FailureThrottle
  log: Logger
}

export interface Authenticator {
  readonly mode: AuthMode
  /**
   * Who the request acts for. Throws UE_UNAUTHORIZED (detail `missing` or `invalid`) or
   * UE_AUTH_THROTTLED; every refusal is one audit line, without the credential.
   */
  authenticate(request: Request, url?: URL): Promise<Principal>
}

export const ANONYMOUS: Principal = { user: null, admin: false, channel: 'none' }

/**
 * One auth layer for every surface. `extra` adds opaque tokens for one surface only (the
 * materials API's read and admin tokens), checked before the mode's own verifier; with
 * `checkInModeNone` a credential is checked even in mode none (a wrong one is refused).
 */
export function createAuthenticator(
  setup: AuthSetup,
  extra: { tokens: readonly TokenEntry[]; checkInModeNone: boolean } = {
    tokens: [],
    checkInModeNone: false,
  },
): Authenticator {
  const { settings, hook, throttle, log } = setup
  const mode = setup.mode.mode
  const extraMatch = tokenTable(extra.tokens)
  const verify = modeVerifier(setup)
  const channels = { header: settings.header, queryParam: settings.queryParam }

  const refuse = (
    request: Request,
    reason: 'missing' | 'invalid' | 'throttled',
    channel: string,
    address: string | undefined,
  ): never => {
    requestLogger(log, request).warn(
      { audit: 'auth', verdict: 'refused', reason, channel, address },
      'auth refused',
    )
    throw new UeError(reason === 'throttled' ? 'UE_AUTH_THROTTLED' : 'UE_UNAUTHORIZED', {
      detail: reason,
    })
  }

  return {
    mode,
    async authenticate(request, url = urlOf(request)) {
      const info = requestInfo(request)
      const address = info?.remoteAddress
      // Mode none and nothing else to check: credentials are ignored, as before auth existed.
      if (mode === 'none' && !extra.checkInModeNone) return ANONYMOUS
      const presented = presentedCredential(request, url, channels)
      if (presented !== null && throttle.blocked(address))
        return refuse(
          request,
          'throttled',
          typeof presented === 'string' ? 'unknown' : presented.channel,
          address,
        )
      if (presented === 'malformed') {
        throttle.fail(address)
        return refuse(request, 'invalid', 'unknown', address)
      }
      if (presented !== null) {
        const grant = extraMatch(presented.token) ?? (await verify?.(presented.token)) ?? null
        if (grant !== null) return { ...grant, channel: presented.channel }
        // The hook decides from its own session when the credential is not ours.
        if (mode !== 'hook') {
          throttle.fail(address)
          return refuse(request, 'invalid', presented.channel, address)
        }
      }
      if (mode === 'none') return ANONYMOUS
      if (mode === 'hook' && hook) {
        if (throttle.blocked(address)) return refuse(request, 'throttled', 'hook', address)
        let user: Awaited<ReturnType<AuthorizeHook>>
        try {
          // The host app's code: a real Request, which it may copy, clone or fetch.
          user = await hook(realObjectOf(request), info?.host)
        } catch (err) {
          requestLogger(log, request).error(
            { err },
            'auth: the authorize hook threw; the request is refused',
          )
          user = null
        }
        if (user && typeof user.user === 'string' && user.user.length > 0)
          return { user: user.user, admin: user.admin === true, channel: 'hook' }
      }
      return refuse(request, 'missing', 'none', address)
    },
  }
}

function modeVerifier(setup: AuthSetup): ((token: string) => Promise<Grant | null>) | null {
  const { settings, log } = setup
  switch (setup.mode.mode) {
    case 'tokens': {
      const match = tokenTable(userTokens(settings.tokens, settings.adminUsers))
      return async (token) => match(token)
    }
    case 'jwt':
      return jwtVerifier(settings.jwt, log)
    default:
      return null
  }
}
