import type { ServerConfig } from '../config/load.js'
import { UeError } from '../shared/errors.js'
import { isLoopbackHost } from './loopback.js'
import type { AuthMode } from './types.js'

export interface ResolvedMode {
  mode: AuthMode
  /** True when `auth.mode` (UEDITOR_AUTH) names it, false when inferred. */
  explicit: boolean
}

/**
 * `auth.mode` when set; else the hook, then JWT, then static tokens, then none. A mode none
 * that is only inferred (`explicit: false`) lets nobody in anonymously (`unconfigured.ts`).
 */
export function resolveAuthMode(auth: ServerConfig['auth'], hasHook: boolean): ResolvedMode {
  if (auth.mode !== undefined) {
    if (auth.mode === 'hook' && !hasHook)
      throw new UeError('UE_CONFIG_INVALID', {
        detail: '\n  - auth.mode: hook needs an authorize function passed to createUeditorServer',
      })
    return { mode: auth.mode, explicit: true }
  }
  if (hasHook) return { mode: 'hook', explicit: false }
  if (auth.jwt.secret !== undefined || auth.jwt.jwksUrl !== undefined)
    return { mode: 'jwt', explicit: false }
  if (auth.tokens.length > 0) return { mode: 'tokens', explicit: false }
  return { mode: 'none', explicit: false }
}

/**
 * Whether the standalone server may listen on `host` with this mode: without auth only on
 * loopback, unless `UEDITOR_AUTH=none` says so explicitly ('warn').
 */
export function bindVerdict(host: string, m: ResolvedMode): 'ok' | 'warn' | 'refuse' {
  if (m.mode !== 'none' || isLoopbackHost(host)) return 'ok'
  return m.explicit ? 'warn' : 'refuse'
}
