import type { HostContext } from '../shared/request-info.js'

/** How the server decides who is calling (docs/auth.md). */
export type AuthMode = 'none' | 'tokens' | 'jwt' | 'hook'

/** Where a request's credential came from. `none`: no credential was needed (mode none). */
export type AuthChannel = 'authorization' | 'header' | 'query' | 'hook' | 'none'

/** Who a request acts for. `user` is null when nobody signed in (mode none). */
export interface Principal {
  user: string | null
  admin: boolean
  channel: AuthChannel
}

/** The caller of one request: who (when known) and from where (when the adapter knows). */
export interface Actor extends Principal {
  address?: string | undefined
}

/** What a credential grants, before the channel is known. */
export interface Grant {
  user: string | null
  admin: boolean
}

/** What the host app's `authorize` hook returns for a signed-in user; null for nobody. */
export interface AuthorizedUser {
  /** A stable id of the user in the host app; files are owned by it. */
  user: string
  /** May see and delete every file and write materials. */
  admin?: boolean
}

/** The embedded mode: the host app decides from its own session (usually a cookie). */
export type AuthorizeHook = (
  request: Request,
  /** The host framework's request and user, when the request came through an adapter. */
  host?: HostContext,
) => AuthorizedUser | null | undefined | Promise<AuthorizedUser | null | undefined>
