import { randomUUID } from 'node:crypto'

/** What every log line written while a request is being handled carries. */
export interface RequestContext {
  readonly requestId: string
}

/*
 * Kept beside the request object rather than in an AsyncLocalStorage: on Node 20 and 22 an
 * AsyncLocalStorage runs a promise hook for every promise the process makes once it is used,
 * which cost a `config` request 15-25% of its CPU. Code that logs for a request asks
 * `requestLogger` with that request.
 */
const contexts = new WeakMap<Request, RequestContext>()

export function requestContext(request: Request): RequestContext | undefined {
  return contexts.get(request)
}

export function bindRequestContext(request: Request, context: RequestContext): void {
  contexts.set(request, context)
}

// Short enough for a log field, and nothing a log viewer or a header could misread.
const SANE_ID = /^[A-Za-z0-9._:/+=-]{1,128}$/

/** The caller's `X-Request-Id` when it is sane, else a fresh UUID. */
export function requestIdFrom(header: string | null): string {
  return header !== null && SANE_ID.test(header) ? header : randomUUID()
}
