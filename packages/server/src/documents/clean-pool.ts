import { Worker } from 'node:worker_threads'
import { shuttingDown, UeError } from '../shared/errors.js'
import type { ArticleBody, CleanedArticle, CleanSettings } from './clean.js'
import type { CleanReply, CleanRequest } from './clean-worker.js'

export interface CleanPoolOptions {
  settings: CleanSettings
  /** Worker threads; none runs before the first save, which starts them all. */
  workers: number
  /** Time one article may take once a worker has it; the worker is terminated after that. */
  timeoutMs: number
  /** Articles waiting for a worker at most; past it a save is refused with UE_BUSY. */
  maxQueue: number
  /** Old-generation heap of one worker, in MiB: an article that needs more is refused. */
  memoryMb: number
}

export interface CleanPool {
  /**
   * The cleaned article, or a refusal: UE_DOCUMENT_TOO_COMPLEX, UE_BODY_INVALID,
   * UE_VALIDATION_FAILED, UE_BUSY, UE_SHUTTING_DOWN.
   */
  clean(body: ArticleBody): Promise<CleanedArticle>
  /** For tests and metrics. */
  readonly stats: {
    readonly cleaned: number
    /** Articles refused: past a limit, past the deadline, out of memory, or not readable. */
    readonly refused: number
    /** Workers terminated at the deadline or lost to their memory limit. */
    readonly overruns: number
    readonly workersStarted: number
    /** Workers alive now, starting ones included. */
    readonly live: number
  }
  /** Refuses what waits, ends every worker; later saves are refused with UE_SHUTTING_DOWN. */
  close(): Promise<void>
}

interface Job {
  body: ArticleBody
  resolve(article: CleanedArticle): void
  reject(error: UeError): void
}

interface Slot {
  worker: Worker
  ready: boolean
  job?: { id: number; job: Job; timer: NodeJS.Timeout }
}

const WORKER_URL = new URL('./clean-worker.js', import.meta.url)

const tooComplex = (detail: string) => new UeError('UE_DOCUMENT_TOO_COMPLEX', { detail })

/**
 * Cleaning is synchronous work on the whole article, so it runs in worker threads: the event
 * loop keeps serving other requests meanwhile, and an article that overruns its time is ended
 * by terminating its worker, which is then replaced.
 */
export function createCleanPool(o: CleanPoolOptions): CleanPool {
  const slots = new Set<Slot>()
  const queue: Job[] = []
  const counts = { cleaned: 0, refused: 0, overruns: 0, workersStarted: 0 }
  let nextId = 1
  let closed = false

  function pump(): void {
    while (queue.length > 0) {
      const idle = [...slots].find((s) => s.ready && !s.job)
      if (!idle) break
      assign(idle, queue.shift() as Job)
    }
    // All of them at the first save: a spare is then ready when one is lost to an article.
    while (!closed && queue.length > 0 && slots.size < o.workers) spawn()
  }

  function spawn(): void {
    const worker = new Worker(WORKER_URL, {
      workerData: o.settings,
      resourceLimits: { maxOldGenerationSizeMb: o.memoryMb },
    })
    worker.unref()
    counts.workersStarted++
    const slot: Slot = { worker, ready: false }
    slots.add(slot)
    worker.on('message', (msg: CleanReply | { ready: true }) => {
      if ('ready' in msg) {
        slot.ready = true
        pump()
        return
      }
      const current = slot.job
      if (!current || current.id !== msg.id) return
      clearTimeout(current.timer)
      slot.job = undefined
      if ('article' in msg) {
        counts.cleaned++
        current.job.resolve(msg.article)
      } else if ('refused' in msg) {
        counts.refused++
        current.job.reject(new UeError(msg.refused.code, { detail: msg.refused.detail }))
      } else current.job.reject(new UeError('UE_INTERNAL', { detail: msg.failed }))
      pump()
    })
    // What ends a worker (its memory limit, a failed start) is handled on `exit`.
    worker.on('error', () => {})
    worker.on('exit', () => {
      slots.delete(slot)
      if (slot.job) {
        clearTimeout(slot.job.timer)
        counts.overruns++
        counts.refused++
        slot.job.job.reject(tooComplex('cleaning it needs more memory than a worker has'))
        slot.job = undefined
      }
      if (closed) return
      if (!slot.ready) {
        // The worker could not even start: fail the waiting saves instead of looping.
        for (const job of queue.splice(0))
          job.reject(new UeError('UE_INTERNAL', { detail: 'the article cleaner failed to start' }))
        return
      }
      replace()
    })
  }

  /** A worker lost to an article is started again at once, so the next save need not wait. */
  function replace(): void {
    if (!closed && slots.size < o.workers) spawn()
    pump()
  }

  function assign(slot: Slot, job: Job): void {
    const id = nextId++
    const timer = setTimeout(() => {
      if (slot.job?.id !== id) return
      slot.job = undefined
      slots.delete(slot)
      counts.overruns++
      counts.refused++
      job.reject(tooComplex(`cleaning it takes longer than ${o.timeoutMs} ms`))
      void slot.worker.terminate()
      replace()
    }, o.timeoutMs)
    slot.job = { id, job, timer }
    slot.worker.postMessage(
      { id, body: job.body } satisfies CleanRequest,
      ownBuffer(job.body.bytes),
    )
  }

  return {
    stats: {
      get cleaned() {
        return counts.cleaned
      },
      get refused() {
        return counts.refused
      },
      get overruns() {
        return counts.overruns
      },
      get workersStarted() {
        return counts.workersStarted
      },
      get live() {
        return slots.size
      },
    },
    clean(body) {
      if (closed) return Promise.reject(shuttingDown())
      // A job waits in the queue only while no worker is free, so this counts waiting saves.
      if (queue.length >= o.maxQueue)
        return Promise.reject(
          new UeError('UE_BUSY', {
            detail: 'every article cleaner is busy',
            headers: { 'Retry-After': '1' },
          }),
        )
      return new Promise<CleanedArticle>((resolve, reject) => {
        queue.push({ body, resolve, reject })
        pump()
      })
    },
    async close() {
      closed = true
      for (const job of queue.splice(0)) job.reject(shuttingDown())
      await Promise.all(
        [...slots].map((s) => {
          if (s.job) {
            clearTimeout(s.job.timer)
            s.job.job.reject(shuttingDown())
            s.job = undefined
          }
          return s.worker.terminate()
        }),
      )
      slots.clear()
    },
  }
}

/**
 * The bytes' buffer when they fill it alone, to hand to the worker without a copy (a body is
 * read into a buffer of its own); a view into a shared pool of small buffers is copied instead.
 */
function ownBuffer(bytes: Uint8Array): ArrayBuffer[] {
  const { buffer } = bytes
  return buffer instanceof ArrayBuffer &&
    bytes.byteOffset === 0 &&
    bytes.byteLength === buffer.byteLength
    ? [buffer]
    : []
}
