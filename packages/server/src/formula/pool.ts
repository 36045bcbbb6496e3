import { Worker } from 'node:worker_threads'
import type { TexLimits } from './mathjax.js'
import type { RenderReply } from './worker.js'

export type RenderOutcome =
  | { kind: 'svg'; svg: string }
  | { kind: 'tex-error'; message: string; svg: string }
  /** The render overran its time budget (or the worker's memory cap); the worker was ended. */
  | { kind: 'too-complex' }
  /** The output would hold a link, a URL or an element outside what MathJax draws. */
  | { kind: 'unsafe'; detail: string }
  /** Every worker is busy and the queue is full. */
  | { kind: 'busy' }
  | { kind: 'failed'; message: string }

export interface RenderPoolOptions {
  /** Worker threads at most; started on first use. */
  workers: number
  /** Time one render may take once a worker has it; the worker is terminated after that. */
  timeoutMs: number
  /** Renders waiting for a worker at most. */
  maxQueue: number
  /** Old-generation heap of one worker, in MiB. */
  memoryMb: number
  /**
   * A worker with nothing to do for this long is ended (a MathJax worker holds tens of MiB), and
   * started again on demand; default 30 s.
   */
  idleMs?: number
  limits: TexLimits
}

export interface RenderPool {
  render(tex: string): Promise<RenderOutcome>
  /** Renders a worker finished or abandoned, for tests and metrics. */
  readonly stats: { renders: number; overruns: number; workersStarted: number }
  close(): Promise<void>
}

interface Job {
  tex: string
  done(outcome: RenderOutcome): void
}

interface Slot {
  worker: Worker
  ready: boolean
  job?: { id: number; job: Job; timer: NodeJS.Timeout }
  idle?: NodeJS.Timeout
}

const WORKER_URL = new URL('./worker.js', import.meta.url)

/**
 * MathJax renders synchronously, so each render runs in a worker thread: the event loop keeps
 * serving while it works, and a render that overruns its budget is ended by terminating its
 * worker (a fresh one replaces it on demand).
 */
export function createRenderPool(o: RenderPoolOptions): RenderPool {
  const slots = new Set<Slot>()
  const queue: Job[] = []
  const stats = { renders: 0, overruns: 0, workersStarted: 0 }
  let nextId = 1
  let closed = false
  const idleMs = o.idleMs ?? 30_000

  /** Ends a worker that stays without work, so a burst's memory goes back once it is over. */
  function retireWhenIdle(slot: Slot): void {
    clearTimeout(slot.idle)
    slot.idle = setTimeout(() => {
      if (slot.job || closed) return
      slots.delete(slot)
      void slot.worker.terminate()
    }, idleMs)
    slot.idle.unref()
  }

  function pump(): void {
    while (queue.length > 0) {
      const idle = [...slots].find((s) => s.ready && !s.job)
      if (idle) {
        assign(idle, queue.shift() as Job)
        continue
      }
      const starting = [...slots].some((s) => !s.ready)
      if (!starting && slots.size < o.workers) spawn()
      return
    }
  }

  function spawn(): void {
    const worker = new Worker(WORKER_URL, {
      workerData: o.limits,
      resourceLimits: { maxOldGenerationSizeMb: o.memoryMb },
    })
    worker.unref()
    stats.workersStarted++
    const slot: Slot = { worker, ready: false }
    slots.add(slot)
    worker.on('message', (msg: RenderReply | { ready: true }) => {
      if ('ready' in msg) {
        slot.ready = true
        pump()
        if (!slot.job) retireWhenIdle(slot)
        return
      }
      const current = slot.job
      if (!current || current.id !== msg.id) return
      clearTimeout(current.timer)
      slot.job = undefined
      stats.renders++
      if ('failed' in msg) current.job.done({ kind: 'failed', message: msg.failed })
      else if ('refused' in msg)
        current.job.done(
          msg.refused === 'unsafe'
            ? { kind: 'unsafe', detail: msg.detail }
            : { kind: 'too-complex' },
        )
      else if (msg.ok) current.job.done({ kind: 'svg', svg: msg.svg })
      else current.job.done({ kind: 'tex-error', message: msg.message, svg: msg.svg })
      pump()
      if (!slot.job) retireWhenIdle(slot)
    })
    worker.on('error', () => {})
    worker.on('exit', () => {
      const wasReady = slot.ready
      clearTimeout(slot.idle)
      slots.delete(slot)
      if (slot.job) {
        clearTimeout(slot.job.timer)
        // A worker that dies mid-render ran out of memory: the formula is too complex.
        stats.overruns++
        slot.job.job.done({ kind: 'too-complex' })
        slot.job = undefined
      }
      if (!wasReady && !closed) {
        // The worker could not even start: fail the waiting renders instead of looping.
        for (const job of queue.splice(0))
          job.done({ kind: 'failed', message: 'formula worker failed to start' })
        return
      }
      if (!closed) pump()
    })
  }

  function assign(slot: Slot, job: Job): void {
    clearTimeout(slot.idle)
    const id = nextId++
    const timer = setTimeout(() => {
      if (slot.job?.id !== id) return
      slot.job = undefined
      slots.delete(slot)
      stats.overruns++
      job.done({ kind: 'too-complex' })
      void slot.worker.terminate()
      pump()
    }, o.timeoutMs)
    slot.job = { id, job, timer }
    slot.worker.postMessage({ id, tex: job.tex })
  }

  return {
    stats,
    render(tex) {
      if (closed) return Promise.resolve({ kind: 'failed', message: 'closed' })
      if (queue.length >= o.maxQueue) return Promise.resolve({ kind: 'busy' })
      return new Promise<RenderOutcome>((resolve) => {
        queue.push({ tex, done: resolve })
        pump()
      })
    },
    async close() {
      closed = true
      for (const job of queue.splice(0)) job.done({ kind: 'failed', message: 'closed' })
      await Promise.all(
        [...slots].map((s) => {
          if (s.job) {
            clearTimeout(s.job.timer)
            s.job.job.done({ kind: 'failed', message: 'closed' })
            s.job = undefined
          }
          return s.worker.terminate()
        }),
      )
      slots.clear()
    },
  }
}
