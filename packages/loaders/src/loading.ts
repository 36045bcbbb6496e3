/** Balances overlapping calls: true when the first starts, false when the last ends. */
export function loadingTracker(onChange?: (loading: boolean) => void) {
  let active = 0
  return async <T>(work: () => Promise<T>): Promise<T> => {
    if (active++ === 0) onChange?.(true)
    try {
      return await work()
    } finally {
      if (--active === 0) onChange?.(false)
    }
  }
}
