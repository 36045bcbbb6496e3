import ipaddr from 'ipaddr.js'

/** One key per IPv4 address, and per /64 for IPv6 (one host usually holds a whole /64). */
export function clientKey(address: string): string {
  if (!ipaddr.isValid(address)) return address
  const ip = ipaddr.process(address)
  if (ip.kind() === 'ipv4') return ip.toString()
  return `${ip.toNormalizedString().split(':').slice(0, 4).join(':')}::/64`
}
