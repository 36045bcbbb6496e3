import type { UploadLedger } from '../db/upload-ledger.js'
import type { Logger } from '../shared/types.js'
import type { UnfinishedUploads } from './unfinished.js'

/** Rows looked at per pass; a larger backlog takes a few passes. */
const BATCH = 200

/**
 * One pass of the expiry sweep: every expired row's unfinished bytes are removed by the way that
 * keeps them, then the row; then each way's own orphans. Answers how many rows went. A failure
 * is logged and the row kept, so the next pass tries again.
 */
export async function sweepExpiredUploads(
  o: { uploads: UploadLedger; unfinished: UnfinishedUploads; log: Logger },
  now = Date.now(),
): Promise<number> {
  let removed = 0
  for (const row of await o.uploads.expired(now, BATCH)) {
    try {
      if (row.state === 'receiving' || row.state === 'processing')
        await o.unfinished.of(row.via)?.remove(row)
      if (await o.uploads.remove(row.id)) removed++
    } catch (e) {
      o.log.warn({ err: e, upload: row.id }, 'expired upload not removed')
    }
  }
  for (const way of o.unfinished.all()) await way.sweepOrphans?.()
  if (removed > 0) o.log.info({ uploads: removed }, 'removed expired uploads')
  return removed
}

/** Runs the sweep every `intervalMs` (never two passes at once); `stop` waits for a running one. */
export function startUploadSweep(
  o: { uploads: UploadLedger; unfinished: UnfinishedUploads; log: Logger },
  intervalMs: number,
): { stop(): Promise<void> } {
  let running: Promise<unknown> | undefined
  const timer = setInterval(() => {
    running ??= sweepExpiredUploads(o)
      .catch((e: unknown) => o.log.warn({ err: e }, 'upload sweep failed'))
      .finally(() => {
        running = undefined
      })
  }, intervalMs)
  timer.unref()
  return {
    async stop() {
      clearInterval(timer)
      await running
    },
  }
}
