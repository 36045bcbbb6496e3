import type { FetchHandler } from '../shared/types.js'

/**
 * The paths a server's `fetch` answers besides the static site: `exact` paths, and `prefixes`
 * (each ending in `/`) under which it answers every path.
 */
export interface Mounts {
  readonly exact: readonly string[]
  readonly prefixes: readonly string[]
}

/** What the one-line mounts take from `createUeditorServer()`: `ue` itself. */
export interface MountableServer {
  readonly fetch: FetchHandler
  readonly mounts: Mounts
}

/** Whether an adapter was handed the whole server (`ue`) rather than one of its handlers. */
export function isMountableServer(value: FetchHandler | MountableServer): value is MountableServer {
  return typeof value === 'object' && value !== null && typeof value.fetch === 'function'
}

/**
 * Whether `fetch` answers the path of this request target (`/ueditor?action=config`,
 * `/uploads/…`); read the way `fetch` reads it, so both agree on dot segments and encoding.
 * A target that is not a URL is not ours: the host app answers it.
 */
export function isMounted(mounts: Mounts, target: string): boolean {
  // Concatenated, not resolved, as the node bridge does: `//x/y` stays a path on this host.
  const url = target.startsWith('/') ? URL.parse(`http://localhost${target}`) : URL.parse(target)
  if (!url) return false
  const { pathname } = url
  return mounts.exact.includes(pathname) || mounts.prefixes.some((p) => pathname.startsWith(p))
}
