import { AsyncLocalStorage } from 'node:async_hooks'
import { randomUUID } from 'node:crypto'

/** What every log line written while a request is being handled carries. */
export interface RequestContext {
  readonly requestId: string
}

const storage = new AsyncLocalStorage<RequestContext>()

export function currentRequest(): RequestContext | undefined {
  return storage.getStore()
}

export function runInRequest<T>(context: RequestContext, fn: () => T): T {
  return storage.run(context, fn)
}

// Short enough for a log field, and nothing a log viewer or a header could misread.
const SANE_ID = /^[A-Za-z0-9._:/+=-]{1,128}$/

/** The caller's `X-Request-Id` when it is sane, else a fresh UUID. */
export function requestIdFrom(header: string | null): string {
  return header !== null && SANE_ID.test(header) ? header : randomUUID()
}
