import { setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import type { UeErrorCode } from '../shared/errors.js'
import type { ArticleBody, CleanedArticle, CleanSettings } from './clean.js'

/** Worker entry: cleans one article per message. The pool terminates it when one overruns. */
export interface CleanRequest {
  id: number
  body: ArticleBody
}
export type CleanReply =
  | { id: number; article: CleanedArticle }
  | { id: number; refused: { code: UeErrorCode; detail: string | undefined } }
  | { id: number; failed: string }

/**
 * How much lower than the event loop's the worker thread's CPU priority is (a nice value). On
 * Linux it is each thread's own, so when the cores are busy, requests are served before articles
 * are cleaned; elsewhere it would lower the whole process, so it is left alone.
 */
const NICER_BY = 10

const port = parentPort
if (port) {
  if (process.platform === 'linux')
    try {
      setPriority(0, NICER_BY)
    } catch {
      // A container that forbids it: the worker runs at the event loop's priority.
    }
  // Loaded only now, so that loading them, the most work of a start, runs at that priority too.
  const { isUeError } = await import('../shared/errors.js')
  const { createBodyCleaner } = await import('./clean.js')
  const clean = createBodyCleaner(workerData as CleanSettings)
  // One small article before `ready` compiles the cleaner, so a user's first save is not
  // charged for it against its time budget.
  clean({
    bytes: new TextEncoder().encode(
      '<p style="color:red"><a href="/x">x</a><img src="/y.png"></p>',
    ),
    json: false,
  })
  port.on('message', ({ id, body }: CleanRequest) => {
    let reply: CleanReply
    try {
      reply = { id, article: clean(body) }
    } catch (e) {
      if (isUeError(e)) reply = { id, refused: { code: e.code, detail: e.detail } }
      // A stack the cleaner overflows is the article's depth, not a fault of the server.
      else if (e instanceof RangeError)
        reply = { id, refused: { code: 'UE_DOCUMENT_TOO_COMPLEX', detail: 'nested too deeply' } }
      else reply = { id, failed: e instanceof Error ? e.message : String(e) }
    }
    port.postMessage(reply)
  })
  port.postMessage({ ready: true })
}
