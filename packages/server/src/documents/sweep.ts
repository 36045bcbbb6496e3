import type { Logger } from '../shared/types.js'
import { type FileRemovalHooks, type OrphanDeps, sweepOrphans } from './orphans.js'

export interface OrphanSweep {
  /** Stops the timer and waits for a sweep in progress. */
  stop(): Promise<void>
}

/**
 * Every `intervalMs`, removes the orphans older than `graceMs` (the same work as
 * `files orphans --fix`). Every node may run it: each removal checks again, in its own
 * transaction, that the file is still an orphan. A sweep never overlaps the one before.
 */
export function startOrphanSweep(
  deps: OrphanDeps & { log: Logger },
  o: { intervalMs: number; graceMs: number; hooks?: FileRemovalHooks },
): OrphanSweep {
  let running: Promise<void> | undefined
  const sweep = async () => {
    try {
      const result = await sweepOrphans(deps, {
        storedBefore: Date.now() - o.graceMs,
        fix: true,
        hooks: o.hooks,
      })
      if (result.found > 0) deps.log.info({ orphans: result }, 'orphan sweep')
    } catch (err) {
      deps.log.error({ err }, 'orphan sweep failed; the next one tries again')
    }
  }
  const timer = setInterval(() => {
    running ??= sweep().finally(() => {
      running = undefined
    })
  }, o.intervalMs)
  timer.unref()
  return {
    async stop() {
      clearInterval(timer)
      await running
    },
  }
}
