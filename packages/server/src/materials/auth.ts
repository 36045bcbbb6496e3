import { createHash, timingSafeEqual } from 'node:crypto'
import { isIP } from 'node:net'
import { UeError } from '../shared/errors.js'
import { requestInfo } from '../shared/request-info.js'
import { errorResponse } from './respond.js'

/** `admin` implies `read`. */
export type Scope = 'read' | 'admin'

export interface MaterialsAuthOptions {
  tokens: readonly string[]
  adminTokens: readonly string[]
  /** Reads without a token: only when no read token is configured and the server is on loopback. */
  publicReads: boolean
}

/** Returns a refusal to send, or null when the request may go on. */
export type Authorize = (request: Request, scope: Scope) => Response | null

const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i
const REALM = 'Bearer realm="materials"'

/**
 * Bearer tokens (RFC 6750). Tokens are compared as SHA-256 digests with `timingSafeEqual`, and
 * every configured token is compared, so neither the length nor the position of a match leaks.
 */
export function createMaterialsAuth(o: MaterialsAuthOptions): Authorize {
  const read = o.tokens.map(digest)
  const admin = o.adminTokens.map(digest)

  return (request, scope) => {
    const header = request.headers.get('authorization')
    if (header === null) {
      if (scope === 'read' && o.publicReads && peerIsLoopback(request)) return null
      return refuse('UE_UNAUTHORIZED', REALM)
    }
    const token = BEARER.exec(header)?.[1]
    const granted = token === undefined ? null : scopeOf(digest(token), read, admin)
    if (granted === null) return refuse('UE_UNAUTHORIZED', `${REALM}, error="invalid_token"`)
    if (scope === 'admin' && granted !== 'admin')
      return refuse('UE_FORBIDDEN', `${REALM}, error="insufficient_scope", scope="admin"`)
    return null
  }
}

function scopeOf(presented: Buffer, read: Buffer[], admin: Buffer[]): Scope | null {
  let isAdmin = false
  let isRead = false
  for (const d of admin) isAdmin = timingSafeEqual(presented, d) || isAdmin
  for (const d of read) isRead = timingSafeEqual(presented, d) || isRead
  return isAdmin ? 'admin' : isRead ? 'read' : null
}

function refuse(code: 'UE_UNAUTHORIZED' | 'UE_FORBIDDEN', challenge: string): Response {
  return errorResponse(new UeError(code), { 'WWW-Authenticate': challenge })
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest()
}

/** When the adapter knows the peer (node:http), it must be on this machine too. */
function peerIsLoopback(request: Request): boolean {
  const peer = requestInfo(request)?.remoteAddress
  return peer === undefined || isLoopbackHost(peer)
}

/** 127.0.0.0/8, ::1 (also IPv4-mapped) and `localhost`. `0.0.0.0` and `::` are not loopback. */
export function isLoopbackHost(host: string): boolean {
  let h = host.trim().toLowerCase()
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1)
  if (h === 'localhost') return true
  if (isIP(h) === 4) return h.startsWith('127.')
  if (isIP(h) !== 6) return false
  const canonical = new URL(`http://[${h}]/`).hostname
  if (canonical === '[::1]') return true
  const mapped = /^\[::ffff:([0-9a-f]{1,4}):[0-9a-f]{1,4}\]$/.exec(canonical)
  return mapped !== null && Number.parseInt(mapped[1] as string, 16) >> 8 === 127
}
