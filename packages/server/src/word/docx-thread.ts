import { Worker } from 'node:worker_threads'
import { UeError } from '../shared/errors.js'
import type { DocxHtml } from './docx-html.js'
import type { DocxReply, DocxWork } from './docx-worker.js'
import type { DocxPackage } from './package.js'

const WORKER_URL = new URL('./docx-worker.js', import.meta.url)

/**
 * `docxToHtml` in a thread of its own: mammoth reads a document's XML in one synchronous pass
 * (about 0.9 s for 5,000 paragraphs), which on the event loop would hold every other request
 * for as long; and a document that outlasts `timeoutMs` is stopped (the thread terminated)
 * instead of keeping its conversion slot until it ends.
 */
export function docxInThread(
  pkg: DocxPackage,
  maxPictures: number,
  timeoutMs: number,
  tooLong: () => UeError,
): Promise<DocxHtml> {
  const work: DocxWork = { parts: [...pkg.parts], maxPictures }
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_URL, { workerData: work })
    let settled = false
    const settle = (fn: () => void) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      void worker.terminate()
      fn()
    }
    const timer = setTimeout(() => settle(() => reject(tooLong())), timeoutMs)
    worker.once('message', (reply: DocxReply) =>
      settle(() => {
        if ('html' in reply)
          resolve({
            ...reply.html,
            pictures: reply.html.pictures.map((p) => ({ ...p, bytes: Buffer.from(p.bytes) })),
          })
        else if ('refused' in reply)
          reject(new UeError(reply.refused.code, { detail: reply.refused.detail }))
        else reject(new UeError('UE_WORD_INVALID', { detail: reply.failed }))
      }),
    )
    worker.once('error', (cause) =>
      settle(() => reject(new UeError('UE_WORD_INVALID', { detail: 'conversion failed', cause }))),
    )
    worker.once('exit', () =>
      settle(() => reject(new UeError('UE_WORD_INVALID', { detail: 'conversion ended early' }))),
    )
  })
}
