import { type Duplex, finished, type Readable, type Writable } from 'node:stream'

/**
 * Pipes `streams` into one another, as `stream/promises` `pipeline` does for Node streams. The
 * first error or premature close of any of them, or `signal` aborting (with its reason),
 * destroys them all. It settles once every stream has ended or closed (a file once its
 * descriptor is closed, so whoever removes it after a failure removes it for good): resolved
 * when the last one finished and nothing failed, else rejected with the first error.
 *
 * Written out because Node's `pipeline` makes an `AbortController` per call and aborts it when
 * it ends, which builds a `DOMException` with its stack: measurable on every small upload,
 * which goes through two of them.
 */
export function pump(
  streams: readonly [Readable, ...Duplex[], Writable],
  signal?: AbortSignal,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let failure: Error | undefined
    let pending = streams.length
    const fail = (error: Error) => {
      if (failure) return
      failure = error
      signal?.removeEventListener('abort', onAbort)
      for (const stream of streams) stream.destroy(error)
    }
    const onAbort = () => fail(abortReason(signal))
    // Each watcher stays attached: it is its stream's error listener, also for the errors the
    // destroys above raise.
    const last = streams.length - 1
    streams.forEach((stream, i) => {
      const watched = i === 0 ? { writable: false } : i === last ? { readable: false } : {}
      finished(stream, watched, (error) => {
        if (error) fail(error)
        if (--pending > 0) return
        signal?.removeEventListener('abort', onAbort)
        if (failure) reject(failure)
        else resolve()
      })
    })
    for (let i = 0; i < last; i++) (streams[i] as Readable).pipe(streams[i + 1] as Writable)
    if (signal?.aborted) onAbort()
    else signal?.addEventListener('abort', onAbort, { once: true })
  })
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason
  return reason instanceof Error ? reason : new Error('aborted', { cause: reason })
}
