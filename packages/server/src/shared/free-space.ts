import { statfsSync } from 'node:fs'
import { statfs } from 'node:fs/promises'
import { dirname } from 'node:path'

/** Free bytes for unprivileged writers on the volume holding `path` (or its nearest parent). */
export async function freeBytes(path: string): Promise<number> {
  for (let dir = path; ; dir = dirname(dir)) {
    try {
      const s = await statfs(dir)
      return s.bavail * s.bsize
    } catch (e) {
      const missing = (e as NodeJS.ErrnoException).code === 'ENOENT'
      if (!missing || dirname(dir) === dir) return Number.POSITIVE_INFINITY
    }
  }
}

/**
 * `freeBytes` answered directly, for the upload gate's check on every upload: a `statfs` is a
 * few microseconds of the kernel, where the thread-pool round trip of `freeBytes` cost the main
 * thread tens.
 */
export function freeBytesNow(path: string): number {
  for (let dir = path; ; dir = dirname(dir)) {
    try {
      const s = statfsSync(dir)
      return s.bavail * s.bsize
    } catch (e) {
      const missing = (e as NodeJS.ErrnoException).code === 'ENOENT'
      if (!missing || dirname(dir) === dir) return Number.POSITIVE_INFINITY
    }
  }
}
