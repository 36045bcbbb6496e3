import type { Metrics } from '../shared/metrics.js'
import type { ActionDef } from './action-table.js'

interface Entry {
  state?: unknown
  code?: unknown
  size?: unknown
}

/**
 * Counts what an answered editor request did: its outcome, stored bytes, catch outcomes. (A
 * refusal is counted as such once, on the error path.)
 */
export function recordAnswer(
  metrics: Metrics,
  def: ActionDef | undefined,
  startedMs: number,
  answer: { code?: string; result?: object },
): void {
  const action = def?.name ?? 'unknown'
  const outcome = answer.code ?? 'SUCCESS'
  metrics.editorRequest(action, outcome, (performance.now() - startedMs) / 1000)
  if (def?.kind === 'catch') {
    const list = (answer.result as { list?: Entry[] } | undefined)?.list
    if (!list) metrics.caught(outcome)
    for (const entry of list ?? []) {
      const ok = entry.state === 'SUCCESS'
      metrics.caught(ok ? 'SUCCESS' : typeof entry.code === 'string' ? entry.code : 'UE_INTERNAL')
      if (ok && typeof entry.size === 'number') metrics.stored(action, entry.size)
    }
  } else if (def && (def.kind === 'upload' || def.kind === 'base64')) {
    const size = (answer.result as Entry | undefined)?.size
    if (typeof size === 'number') metrics.stored(action, size)
  }
}
