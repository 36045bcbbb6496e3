const UNITS: Readonly<Record<string, number>> = {
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
  t: 1024 ** 4,
  tb: 1024 ** 4,
  tib: 1024 ** 4,
}

const SIZE = /^(\d+(?:\.\d+)?|\.\d+)\s*([a-z]*)$/i

/** What a size setting accepts, for the message that refuses a bad one. */
export const SIZE_FORMS =
  'must be a size: a number of bytes (2097152) or a number and a unit: 512KB, 2MB, 1.5GiB ' +
  '(B, KB, MB, GB, TB or KiB, MiB, GiB, TiB; KB and KiB both count 1024 bytes)'

/**
 * Bytes from `2MB`, `512 KB`, `1.5GiB`, `2097152` or the number 2097152. KB/MB/GB count in
 * 1024s like KiB/MiB/GiB (as nginx and most upload settings do); a fraction of a byte is
 * dropped. Undefined for anything else.
 */
export function parseByteSize(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined
  if (typeof value !== 'string') return undefined
  const m = SIZE.exec(value.trim())
  if (!m) return undefined
  const unit = UNITS[(m[2] ?? '').toLowerCase() || 'b']
  if (unit === undefined) return undefined
  return Math.floor(Number(m[1]) * unit)
}
