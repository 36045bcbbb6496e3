import { copyFile, mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { createFairQueue } from '../images/fair-queue.js'
import { runSoffice } from '../images/soffice.js'
import { deadline } from '../shared/deadline.js'
import { UeError } from '../shared/errors.js'
import { checkCompoundFile, containerOf } from './container.js'
import type { DocxHtml } from './docx-html.js'
import { docxInThread } from './docx-thread.js'
import { type PackageLimits, readDocxPackage } from './package.js'

export interface WordImportOptions {
  /** The LibreOffice executable for `.doc`, or null when none is installed. */
  soffice: string | null
  /** Where each `.doc` conversion gets its own folder (the uploads' temp folder). */
  tempDir: string
  limits: PackageLimits
  maxPictures: number
  /** Documents converted at once, and waiting; past that: UE_BUSY. */
  concurrency: number
  maxQueued: number
  /** The whole conversion, from the moment it is queued. */
  timeoutSeconds: number
}

export interface WordImporter {
  /**
   * The document at `path` (its first bytes `head`, its name's extension `ext`) as HTML with
   * placeholder picture sources, and its pictures' bytes. Stores nothing.
   */
  convert(path: string, head: Uint8Array, ext: string, client: string): Promise<DocxHtml>
}

const tooLong = () =>
  new UeError('UE_WORD_CONVERSION_FAILED', { detail: 'the conversion took too long' })

/**
 * `.docx` through mammoth, after its package is checked; `.doc` first through LibreOffice into a
 * `.docx` (a private profile in a folder of its own, no network where it can be cut, killed at
 * the time limit), whose package is then checked the same way. Conversions take turns between
 * clients on a queue of their own.
 */
export function createWordImporter(o: WordImportOptions): WordImporter {
  const queue = createFairQueue({
    slots: o.concurrency,
    maxWeight: o.concurrency,
    maxQueued: o.maxQueued,
    maxQueuedPerClient: Math.max(1, Math.ceil(o.maxQueued / 4)),
  })
  const ms = o.timeoutSeconds * 1000
  return {
    async convert(path, head, ext, client) {
      const container = containerOf(head)
      if (container === 'cfb') {
        checkCompoundFile(await readFile(path))
        if (ext !== '.doc') throw new UeError('UE_CONTENT_MISMATCH')
      } else if (ext !== '.docx') throw new UeError('UE_CONTENT_MISMATCH')
      const started = Date.now()
      const limit = deadline(ms, () => new UeError('UE_BUSY', { detail: 'word import queue wait' }))
      let timer: NodeJS.Timeout | undefined
      try {
        const work = queue.run(client, 1, limit.signal, async () => {
          limit.dispose()
          const left = () => Math.max(1000, ms - (Date.now() - started))
          const docx = container === 'cfb' ? await docToDocx(o, path, left()) : undefined
          try {
            const pkg = await readDocxPackage(docx?.path ?? path, o.limits)
            return await docxInThread(pkg, o.maxPictures, left(), tooLong)
          } finally {
            await docx?.dispose()
          }
        })
        work.catch(() => {})
        // Reading the package is not bounded by the thread's limit: the caller is answered at
        // the overall limit all the same.
        const overrun = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(tooLong()), ms)
        })
        return await Promise.race([work, overrun])
      } finally {
        clearTimeout(timer)
        limit.dispose()
      }
    },
  }
}

/** LibreOffice's `.docx` of a `.doc`, in a folder of its own that `dispose` removes. */
async function docToDocx(
  o: WordImportOptions,
  path: string,
  timeoutMs: number,
): Promise<{ path: string; dispose(): Promise<void> }> {
  if (!o.soffice) throw new UeError('UE_CONVERTER_UNAVAILABLE', { detail: 'no LibreOffice' })
  const work = await mkdtemp(join(o.tempDir, 'word-'))
  const dispose = () => rm(work, { recursive: true, force: true })
  try {
    const input = join(work, 'document.doc')
    await copyFile(path, input)
    await runSoffice(o.soffice, input, work, {
      convertTo: 'docx:MS Word 2007 XML',
      timeoutMs,
      tooLong,
    })
    const out = join(work, 'out', 'document.docx')
    await stat(out).catch((cause: unknown) => {
      throw new UeError('UE_WORD_CONVERSION_FAILED', { detail: 'no document came out', cause })
    })
    return { path: out, dispose }
  } catch (e) {
    await dispose()
    throw e
  }
}
