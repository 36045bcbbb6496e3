/** An abort signal with a time limit; `dispose()` stops the timer and forgets the parents. */
export interface Deadline {
  readonly signal: AbortSignal
  dispose(): void
}

/**
 * A signal that aborts after `ms`, or as soon as one of `parents` aborts (with that parent's
 * reason). It stands in for `AbortSignal.any([AbortSignal.timeout(ms), …])`, whose timeout
 * signal Node 20 may garbage-collect before it fires when nothing else holds it: here the
 * timer itself holds the controller, so the deadline fires whatever the collector does.
 */
export function deadline(
  ms: number,
  reason: () => Error,
  ...parents: (AbortSignal | undefined)[]
): Deadline {
  const controller = new AbortController()
  const live = parents.filter((p): p is AbortSignal => p !== undefined)
  const onParent = (event: Event) => {
    dispose()
    controller.abort((event.target as AbortSignal).reason)
  }
  const timer = setTimeout(() => {
    dispose()
    controller.abort(reason())
  }, ms)
  const dispose = () => {
    clearTimeout(timer)
    for (const p of live) p.removeEventListener('abort', onParent)
  }
  for (const p of live) {
    if (p.aborted) {
      dispose()
      controller.abort(p.reason)
      break
    }
    p.addEventListener('abort', onParent, { once: true })
  }
  return { signal: controller.signal, dispose }
}
