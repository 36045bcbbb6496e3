import ipaddr from 'ipaddr.js'

/** One key per IPv4 address, and per /64 for IPv6 (one host usually holds a whole /64). */
export function clientKey(address: string): string {
  if (!ipaddr.isValid(address)) return address
  const ip = ipaddr.process(address)
  if (ip.kind() === 'ipv4') return ip.toString()
  return `${ip.toNormalizedString().split(':').slice(0, 4).join(':')}::/64`
}

/** Who a per-client limit counts: the signed-in user when known, else the client address. */
export interface LimitClient {
  user?: string | null | undefined
  address?: string | undefined
}

/**
 * The one key every per-client limit counts against: `user:<id>` when signed in, else the
 * address's key; undefined when neither is known (such a request skips the per-client limits).
 */
export function limitKey(client: LimitClient): string | undefined {
  if (client.user) return `user:${client.user}`
  return client.address ? clientKey(client.address) : undefined
}
