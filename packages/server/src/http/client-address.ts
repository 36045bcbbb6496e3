import ipaddr from 'ipaddr.js'

export type Range = [ipaddr.IPv4 | ipaddr.IPv6, number]

/** `loopback` names both loopback ranges; anything else is an address or a CIDR range. */
export function parseTrustedProxies(entries: readonly string[]): Range[] {
  const ranges: Range[] = []
  for (const entry of entries) {
    if (entry === 'loopback') {
      ranges.push(ipaddr.parseCIDR('127.0.0.0/8'), ipaddr.parseCIDR('::1/128'))
      continue
    }
    if (entry.includes('/')) ranges.push(ipaddr.parseCIDR(entry))
    else {
      const ip = ipaddr.parse(entry)
      ranges.push([ip, ip.kind() === 'ipv4' ? 32 : 128])
    }
  }
  return ranges
}

/** Whether `address` is one of the trusted proxies (an IPv4-mapped IPv6 form matches too). */
export function isTrustedProxy(address: string, ranges: readonly Range[]): boolean {
  if (!ipaddr.isValid(address)) return false
  const ip = ipaddr.parse(address)
  const forms = [ip]
  // An IPv4 peer on a dual-stack socket shows as ::ffff:a.b.c.d; match it both ways.
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress())
    forms.push((ip as ipaddr.IPv6).toIPv4Address())
  return forms.some((form) =>
    ranges.some(([net, bits]) => net.kind() === form.kind() && form.match(net, bits)),
  )
}

/**
 * The client address: the peer, unless the peer is a trusted proxy, in which case
 * `X-Forwarded-For` is read from its right end, skipping further trusted proxies, and the first
 * address that is not one is the client. A malformed entry stops the walk at the proxy that
 * added it, so a client cannot forge its way past the proxies it does not control.
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | null,
  ranges: readonly Range[],
): string | undefined {
  if (peer === undefined || ranges.length === 0 || !forwardedFor) return peer
  let current = peer
  const hops = forwardedFor.split(',').map((hop) => hop.trim())
  while (isTrustedProxy(current, ranges)) {
    const next = hops.pop()
    if (next === undefined || !ipaddr.isValid(next)) return current
    current = next
  }
  return current
}
