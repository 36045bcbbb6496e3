import { isIP } from 'node:net'

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
