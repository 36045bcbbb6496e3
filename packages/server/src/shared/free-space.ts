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
 * `freeBytes` for one path, where callers that ask while a look-up is under way share its
 * answer (begun a moment before they asked) instead of each sending the kernel another.
 */
export function sharedFreeBytes(path: string): () => Promise<number> {
  let pending: Promise<number> | undefined
  return () => {
    if (pending === undefined) {
      pending = freeBytes(path)
      const done = () => {
        pending = undefined
      }
      pending.then(done, done)
    }
    return pending
  }
}
