import { isUeError, refusalLevel, UeError, type UeErrorCode } from './errors.js'
import { requestLogger } from './log.js'
import { loggedPath, urlOf } from './request-url.js'
import { errorResponse } from './respond.js'
import type { FetchHandler, Logger } from './types.js'

/** Where a part of the server sends whatever it throws. */
export interface ErrorPath {
  /** The part (`editor`, `materials`, a route's name), named in its log lines. */
  area: string
  log: Logger
  /** Counts the refusal; called once per answered error. Not counted when absent. */
  count?(code: UeErrorCode): void
  /** More fields for the log line (the editor's action, the form field it reads, the limit). */
  details?(error: UeError): Record<string, unknown>
  /** The answer in the caller's shape; `{error: {code, message}}` with the code's status else. */
  answer?(error: UeError): Response
}

/**
 * The one error path: any throw becomes a catalogue code (an unknown one `UE_INTERNAL`); a
 * failure that is the operator's business is logged at error with its cause, a refusal as one
 * line at its level (`refusalLevel`) without a stack; it is counted once and answered in the
 * caller's shape.
 */
export function answerError(thrown: unknown, request: Request, path: ErrorPath): Response {
  const error = isUeError(thrown) ? thrown : new UeError('UE_INTERNAL', { cause: thrown })
  const log = requestLogger(path.log, request)
  const level = refusalLevel(error)
  const details = { ...error.context, ...path.details?.(error) }
  if (level === 'error') {
    const cause = isUeError(thrown) ? thrown.cause : undefined
    const line = { err: thrown, ...(cause === undefined ? {} : { cause }) }
    log.error(
      { ...line, path: loggedPath(urlOf(request).pathname), ...details },
      `${path.area} request failed`,
    )
  } else {
    const line = { code: error.code, ...(error.detail ? { detail: error.detail } : {}) }
    log[level]({ ...line, ...details }, `${path.area} request refused`)
  }
  path.count?.(error.code)
  return path.answer ? path.answer(error) : errorResponse(error)
}

/** `handler`, with whatever it throws sent down `path`. */
export function catchErrors(handler: FetchHandler, path: ErrorPath): FetchHandler {
  return async (request, info) => {
    try {
      return await handler(request, info)
    } catch (e) {
      return answerError(e, request, path)
    }
  }
}
