/** At most `limit` holders at once; the others wait in arrival order. */
export interface Semaphore {
  run<T>(job: () => Promise<T>): Promise<T>
}

export function createSemaphore(limit: number): Semaphore {
  let active = 0
  const waiting: (() => void)[] = []
  const release = () => {
    const next = waiting.shift()
    if (next) next()
    else active--
  }
  return {
    async run(job) {
      if (active < limit) active++
      else await new Promise<void>((resolve) => waiting.push(resolve))
      try {
        return await job()
      } finally {
        release()
      }
    },
  }
}
