import type { JWTPayload } from 'jose'
import { USER_ID } from '../config/user-id.js'
import type { Logger } from '../shared/types.js'
import type { Grant } from './types.js'

export interface JwtOptions {
  secret?: string | undefined
  jwksUrl?: string | undefined
  algorithms?: readonly string[] | undefined
  issuer?: string | undefined
  audience?: string | undefined
  adminClaim: string
  clockToleranceSeconds: number
}

/** A token that could not be checked because the key set could not be had: not its fault. */
export const KEYS_UNAVAILABLE = 'keys-unavailable'

/**
 * Verifies a JWT with jose: the algorithm list is pinned (HS256 for a secret, RS256/ES256 for a
 * JWKS unless configured), so `alg: none` and HS/RS confusion are refused; `exp` is required,
 * `nbf`, `iss` and `aud` are checked. `sub` is the user, under the user-id rule of static tokens
 * (no spaces, controls or bidi overrides to show in audit lines). Returns null for any bad token,
 * `KEYS_UNAVAILABLE` when the JWKS could not be fetched.
 */
export function jwtVerifier(
  o: JwtOptions,
  log: Logger,
): (token: string) => Promise<Grant | null | typeof KEYS_UNAVAILABLE> {
  const algorithms = [
    ...(o.algorithms ?? (o.secret !== undefined ? ['HS256'] : ['RS256', 'ES256'])),
  ]
  const jwks = o.secret === undefined ? new URL(o.jwksUrl as string) : undefined
  // jose loads only where JWTs are configured.
  const loaded = import('jose').then((jose) => ({
    jose,
    key: jwks
      ? jose.createRemoteJWKSet(jwks, {
          timeoutDuration: 5_000,
          cooldownDuration: 30_000,
          cacheMaxAge: 600_000,
        })
      : new TextEncoder().encode(o.secret),
  }))
  // Awaited by every check; a failure here fails those, never the process.
  loaded.catch(() => {})
  return async (token) => {
    const { jose, key } = await loaded
    const { errors, jwtVerify } = jose
    try {
      const { payload } = await jwtVerify(token, key as Parameters<typeof jwtVerify>[1], {
        algorithms,
        ...(o.issuer !== undefined ? { issuer: o.issuer } : {}),
        ...(o.audience !== undefined ? { audience: o.audience } : {}),
        clockTolerance: o.clockToleranceSeconds,
        requiredClaims: ['exp', 'sub'],
      })
      if (typeof payload.sub !== 'string' || !USER_ID.test(payload.sub)) return null
      return { user: payload.sub, admin: grantsAdmin(payload, o.adminClaim) }
    } catch (e) {
      // A key set that cannot be fetched is our problem, not the caller's: say so once per try.
      // (jose throws its plain JOSEError only for a key set answer that is not 200.)
      const unavailable =
        !(e instanceof errors.JOSEError) ||
        e instanceof errors.JWKSTimeout ||
        e instanceof errors.JWKSInvalid ||
        e.code === errors.JOSEError.code
      if (!unavailable) return null
      log.error({ err: e instanceof Error ? e.message : String(e) }, 'auth: JWKS unavailable')
      return KEYS_UNAVAILABLE
    }
  }
}

function grantsAdmin(payload: JWTPayload, claim: string): boolean {
  const value = payload[claim]
  if (value === true || value === 'admin') return true
  return Array.isArray(value) && value.includes('admin')
}
