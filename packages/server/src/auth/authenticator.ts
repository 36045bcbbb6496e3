import type { ServerConfig } from '../config/load.js'
import { UeError } from '../shared/errors.js'
import { realObjectOf } from '../shared/lazy-web-object.js'
import { requestLogger } from '../shared/log.js'
import { requestInfo } from '../shared/request-info.js'
import { urlOf } from '../shared/request-url.js'
import type { Logger } from '../shared/types.js'
import { presentedCredential, unreadQueryToken } from './credentials.js'
import { jwtVerifier, KEYS_UNAVAILABLE } from './jwt.js'
import type { ResolvedMode } from './mode.js'
import { type TokenEntry, tokenTable, userTokens } from './static-tokens.js'
import type { FailureThrottle } from './throttle.js'
import type { AuthMode, AuthorizeHook, Grant, Principal } from './types.js'
import { unconfiguredGuard } from './unconfigured.js'

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
   * UE_AUTH_THROTTLED; every refusal is one audit line, without the credential. In a mode none
   * nobody chose, an anonymous request throws UE_AUTH_NOT_CONFIGURED (`unconfigured.ts`).
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
  // A surface with tokens of its own (the materials API's) is configured: a caller without one
  // gets that surface's own refusal.
  const refuseAnonymous = extra.tokens.length > 0 ? () => {} : unconfiguredGuard(setup.mode, log)

  const refuse = (
    request: Request,
    reason: 'missing' | 'invalid' | 'throttled',
    channel: string,
    address: string | undefined,
    url?: URL,
  ): never => {
    // A token in `serverUrl` that no setting reads looks like "missing"; say where it went.
    const unread = reason === 'missing' && url ? unreadQueryToken(url, channels) : null
    requestLogger(log, request).warn(
      {
        audit: 'auth',
        verdict: 'refused',
        reason,
        channel,
        address,
        ...(unread ? { queryToken: unread } : {}),
      },
      unread
        ? `auth refused: a token arrived in the query parameter "${unread}", which is not read ${
            channels.queryParam
              ? `(auth.queryParam is "${channels.queryParam}")`
              : 'while auth.queryParam is off'
          }; UEDITOR_AUTH_QUERY_PARAM=${unread} accepts it (docs/auth.md)`
        : 'auth refused',
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
      // Mode none and nothing else to check: credentials are ignored.
      if (mode === 'none' && !extra.checkInModeNone) {
        refuseAnonymous(request)
        return ANONYMOUS
      }
      const presented = presentedCredential(request, url, channels)
      if (presented !== null) {
        const token = presented === 'malformed' ? null : presented.token
        const channel = presented === 'malformed' ? 'unknown' : presented.channel
        // With the hook, a credential that is not ours is the hook's to judge: nothing counts.
        const counted = mode !== 'hook'
        // Checked first, so a valid credential is served whatever else came from its address;
        // only one that keeps failing from there is refused without another check.
        if (counted && (await throttle.spent(address, token)))
          return refuse(request, 'throttled', channel, address)
        let verdict = token === null ? null : (extraMatch(token) ?? verify?.(token) ?? null)
        if (verdict instanceof Promise) verdict = (await verdict) ?? null
        if (verdict === KEYS_UNAVAILABLE) return refuse(request, 'invalid', channel, address)
        if (verdict !== null && presented !== 'malformed')
          return { ...verdict, channel: presented.channel }
        if (counted) {
          const throttled = await throttle.fail(address, token)
          return refuse(request, throttled ? 'throttled' : 'invalid', channel, address)
        }
      }
      if (mode === 'none') {
        refuseAnonymous(request)
        return ANONYMOUS
      }
      if (mode === 'hook' && hook) {
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
      return refuse(request, 'missing', 'none', address, url)
    },
  }
}

type Verdict = Grant | null | typeof KEYS_UNAVAILABLE

function modeVerifier(setup: AuthSetup): ((token: string) => Verdict | Promise<Verdict>) | null {
  const { settings, log } = setup
  switch (setup.mode.mode) {
    case 'tokens': {
      const match = tokenTable(userTokens(settings.tokens, settings.adminUsers))
      // Answered at once: the static table needs no await (a tick per request).
      return match
    }
    case 'jwt':
      return jwtVerifier(settings.jwt, log)
    default:
      return null
  }
}
