import { parentPort, workerData } from 'node:worker_threads'
import { isUeError } from '../shared/errors.js'
import { type CleanedArticle, type CleanSettings, createArticleCleaner } from './clean.js'

/** Worker entry: cleans one article per message. The pool terminates it when one overruns. */
export interface CleanRequest {
  id: number
  html: string
}
export type CleanReply =
  | { id: number; article: CleanedArticle }
  | { id: number; refused: string }
  | { id: number; failed: string }

const port = parentPort
if (port) {
  const clean = createArticleCleaner(workerData as CleanSettings)
  // One small article before `ready` compiles the cleaner, so a user's first save is not
  // charged for it against its time budget.
  clean('<p style="color:red"><a href="/x" target="_blank">x</a><img src="/y.png"></p>')
  port.on('message', ({ id, html }: CleanRequest) => {
    let reply: CleanReply
    try {
      reply = { id, article: clean(html) }
    } catch (e) {
      if (isUeError(e) && e.code === 'UE_DOCUMENT_TOO_COMPLEX')
        reply = { id, refused: e.detail ?? '' }
      // A stack the cleaner overflows is the article's depth, not a fault of the server.
      else if (e instanceof RangeError) reply = { id, refused: 'nested too deeply' }
      else reply = { id, failed: e instanceof Error ? e.message : String(e) }
    }
    port.postMessage(reply)
  })
  port.postMessage({ ready: true })
}
