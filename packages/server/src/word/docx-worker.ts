import { parentPort, workerData } from 'node:worker_threads'
import type { UeErrorCode } from '../shared/errors.js'
import type { DocxHtml } from './docx-html.js'

/** What one conversion thread is given: the checked parts, and the picture cap. */
export interface DocxWork {
  parts: [name: string, bytes: Uint8Array][]
  maxPictures: number
}
export type DocxReply =
  | { html: DocxHtml }
  | { refused: { code: UeErrorCode; detail: string | undefined } }
  | { failed: string }

/** Worker entry: one document through mammoth, then the thread ends. */
const port = parentPort
if (port) {
  const { isUeError } = await import('../shared/errors.js')
  const { docxToHtml } = await import('./docx-html.js')
  const work = workerData as DocxWork
  const parts = new Map(work.parts.map(([name, bytes]) => [name, Buffer.from(bytes)]))
  let reply: DocxReply
  try {
    reply = { html: await docxToHtml({ parts }, work.maxPictures) }
  } catch (e) {
    reply = isUeError(e)
      ? { refused: { code: e.code, detail: e.detail } }
      : { failed: e instanceof Error ? e.message : String(e) }
  }
  port.postMessage(reply)
}
