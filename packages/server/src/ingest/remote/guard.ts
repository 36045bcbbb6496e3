import ipaddr from 'ipaddr.js'
import { UeError } from '../../shared/errors.js'

const MAX_URL_LENGTH = 8192

/**
 * Parses a capture source exactly once, with the WHATWG parser the connection will use, and
 * keeps only plain http(s) URLs without userinfo. Odd spellings (`http:/\host`, `0x7f.1`,
 * `2130706433`, a leading space) are normalised by the parser, and the parsed host is what the
 * address policy sees and what is dialled. Throws UE_REMOTE_URL_INVALID.
 */
export function parseRemoteUrl(input: string, base?: URL): URL {
  if (input.length === 0 || input.length > MAX_URL_LENGTH)
    throw new UeError('UE_REMOTE_URL_INVALID')
  let url: URL
  try {
    url = new URL(input, base)
  } catch {
    throw new UeError('UE_REMOTE_URL_INVALID')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UeError('UE_REMOTE_URL_INVALID')
  if (url.username !== '' || url.password !== '') throw new UeError('UE_REMOTE_URL_INVALID')
  if (url.hostname === '') throw new UeError('UE_REMOTE_URL_INVALID')
  return url
}

/** `[::1]` → `::1`; other hosts unchanged. */
export function bareHostname(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname
}

/**
 * Only globally routable unicast addresses: loopback, private, link-local, CGNAT, ULA,
 * multicast, reserved, documentation, NAT64/6to4 and the unspecified address all fail.
 * IPv4-mapped IPv6 (`::ffff:127.0.0.1`) is unwrapped first.
 */
export function isPublicAddress(address: string): boolean {
  const bare = bareHostname(address)
  if (!ipaddr.isValid(bare)) return false
  return ipaddr.process(bare).range() === 'unicast'
}

export function isIpLiteral(hostname: string): boolean {
  return ipaddr.isValid(bareHostname(hostname))
}

interface AllowedHost {
  hostname: string
  port: number | null
}

/**
 * The address policy of the catcher. Public addresses are allowed; a host that an operator
 * listed in `catcher.allowHosts` (exact host, or exact host:port) is allowed whatever it
 * resolves to. The exception is decided on the URL's own host, never on a resolved address,
 * so no other name can borrow it.
 */
export interface AddressPolicy {
  /** Whether `address` may be dialled for a connection to `hostname:port`. */
  allows(address: string, hostname: string, port: number): boolean
  /** Whether the operator listed this host (or host:port) in `catcher.allowHosts`. */
  isAllowListed(hostname: string, port: number): boolean
}

export function createAddressPolicy(allowHosts: readonly string[]): AddressPolicy {
  const allowed = allowHosts.map(parseAllowedHost)
  const isAllowListed = (hostname: string, port: number) => {
    const host = normaliseHostname(hostname)
    return allowed.some((a) => a.hostname === host && (a.port === null || a.port === port))
  }
  return {
    allows: (address, hostname, port) => isAllowListed(hostname, port) || isPublicAddress(address),
    isAllowListed,
  }
}

/** `host`, `host:port`, `[v6]` or `[v6]:port`, normalised the way the URL parser does it. */
export function parseAllowedHost(entry: string): AllowedHost {
  const trimmed = entry.trim().toLowerCase()
  const match = /^(\[[0-9a-f:.]+\]|[^:[\]/@\\\s]+)(?::(\d{1,5}))?$/.exec(trimmed)
  if (!match) throw new UeError('UE_CONFIG_INVALID', { detail: `catcher.allowHosts: "${entry}"` })
  const port = match[2] === undefined ? null : Number(match[2])
  if (port !== null && (port < 1 || port > 65535))
    throw new UeError('UE_CONFIG_INVALID', { detail: `catcher.allowHosts: "${entry}"` })
  return { hostname: normaliseHostname(match[1] as string), port }
}

function normaliseHostname(hostname: string): string {
  const host = hostname.includes(':') && !hostname.startsWith('[') ? `[${hostname}]` : hostname
  try {
    return bareHostname(new URL(`http://${host}/`).hostname)
  } catch {
    return bareHostname(hostname.toLowerCase())
  }
}
