import { parentPort, workerData } from 'node:worker_threads'
import { createTexRenderer, type TexLimits, UnsafeFormulaError } from './mathjax.js'

/** Worker entry: renders one formula per message. The pool terminates it when a render overruns. */
export interface RenderRequest {
  id: number
  tex: string
}
export type RenderReply =
  | { id: number; ok: true; svg: string }
  | { id: number; ok: false; message: string; svg: string }
  | { id: number; refused: 'unsafe' | 'too-complex'; detail: string }
  | { id: number; failed: string }

const port = parentPort
if (port) {
  const render = createTexRenderer(workerData as TexLimits)
  // One small render before `ready` loads the fonts and warms the JIT, so a user's first
  // formula is not charged for them against its time budget.
  await render('\\frac{x}{2}').catch(() => undefined)
  port.on('message', async ({ id, tex }: RenderRequest) => {
    let reply: RenderReply
    try {
      reply = { id, ...(await render(tex)) }
    } catch (e) {
      const detail = e instanceof Error ? e.message : String(e)
      // Deep nesting overflows MathJax's recursive layout: a refusal, not a server fault.
      if (e instanceof UnsafeFormulaError) reply = { id, refused: 'unsafe', detail }
      else if (e instanceof RangeError) reply = { id, refused: 'too-complex', detail }
      else reply = { id, failed: detail }
    }
    port.postMessage(reply)
  })
  port.postMessage({ ready: true })
}
