import { UeError } from '../shared/errors.js'

export interface FairQueueOptions {
  /** Jobs running at once. */
  slots: number
  /** Sum of the weights (decoded pixels) running at once; a heavier job runs alone. */
  maxWeight: number
  /** Jobs waiting, from all clients together. */
  maxQueued: number
  /** Jobs waiting from one client. */
  maxQueuedPerClient: number
}

export interface FairQueue {
  /**
   * Runs `job` once a slot and enough weight are free, taking turns between clients so one
   * client's backlog never delays another's next job by more than one job per client. Refuses
   * with `UE_BUSY` when the queues are full, or when `signal` fires while the job still waits.
   */
  run<T>(client: string, weight: number, signal: AbortSignal, job: () => Promise<T>): Promise<T>
  /** Whether a job of `client` would be taken now rather than refused for a full queue. */
  hasRoom(client: string): boolean
  /** Waiting jobs, for tests and metrics. */
  readonly queued: number
}

interface Waiter {
  weight: number
  start(): void
}

export function createFairQueue(o: FairQueueOptions): FairQueue {
  // Insertion order is the round-robin order; a client that is served moves to the back.
  const queues = new Map<string, Waiter[]>()
  let queued = 0
  let running = 0
  let runningWeight = 0

  const pump = () => {
    while (running < o.slots) {
      const next = queues.entries().next()
      if (next.done) return
      const [client, waiters] = next.value
      const head = waiters[0] as Waiter
      const fits = running === 0 || runningWeight + head.weight <= o.maxWeight
      if (!fits) return
      waiters.shift()
      queues.delete(client)
      if (waiters.length > 0) queues.set(client, waiters)
      queued--
      head.start()
    }
  }

  const hasRoom = (client: string) =>
    queued < o.maxQueued && (queues.get(client)?.length ?? 0) < o.maxQueuedPerClient

  return {
    get queued() {
      return queued
    },
    hasRoom,
    run(client, weight, signal, job) {
      const mine = queues.get(client) ?? []
      if (!hasRoom(client))
        return Promise.reject(new UeError('UE_BUSY', { detail: 'image queue full' }))
      return new Promise((resolve, reject) => {
        const onAbort = () => {
          const list = queues.get(client)
          const at = list?.indexOf(waiter) ?? -1
          if (!list || at < 0) return
          list.splice(at, 1)
          if (list.length === 0) queues.delete(client)
          queued--
          reject(new UeError('UE_BUSY', { detail: 'image queue wait' }))
        }
        const waiter: Waiter = {
          weight,
          start: () => {
            signal.removeEventListener('abort', onAbort)
            running++
            runningWeight += weight
            job()
              .then(resolve, reject)
              .finally(() => {
                running--
                runningWeight -= weight
                pump()
              })
          },
        }
        if (signal.aborted) {
          reject(new UeError('UE_BUSY', { detail: 'image queue wait' }))
          return
        }
        signal.addEventListener('abort', onAbort, { once: true })
        mine.push(waiter)
        if (!queues.has(client)) queues.set(client, mine)
        queued++
        pump()
      })
    },
  }
}
