/**
 * The catalogue of stable error codes. A code is never renamed once released; `docs/errors.md`
 * has one heading per code. `status` is used where the caller speaks HTTP status (materials API,
 * `errorStatus: 'http'`); the editor endpoint answers HTTP 200 with a readable `state` by default.
 */
export const CODES = {
  UE_ACTION_UNKNOWN: { status: 400 },
  UE_METHOD_NOT_ALLOWED: { status: 405 },
  UE_FILE_MISSING: { status: 400 },
  UE_FILE_TOO_LARGE: { status: 413 },
  UE_FILE_EMPTY: { status: 400 },
  UE_TYPE_NOT_ALLOWED: { status: 415 },
  UE_CONTENT_MISMATCH: { status: 415 },
  UE_IMAGE_TOO_LARGE: { status: 413 },
  UE_RATE_LIMITED: { status: 429 },
  UE_STORAGE_FULL: { status: 507 },
  UE_TOO_MANY_FILES: { status: 400 },
  UE_BODY_INVALID: { status: 400 },
  UE_BODY_TOO_LARGE: { status: 413 },
  UE_BODY_ENCODING: { status: 415 },
  UE_BODY_CONSUMED: { status: 500 },
  UE_BODY_TIMEOUT: { status: 408 },
  UE_REQUEST_INVALID: { status: 400 },
  UE_BUSY: { status: 503 },
  UE_KEY_INVALID: { status: 400 },
  UE_REMOTE_URL_INVALID: { status: 400 },
  UE_REMOTE_FORBIDDEN: { status: 403 },
  UE_REMOTE_FAILED: { status: 502 },
  UE_REMOTE_NOT_IMAGE: { status: 415 },
  UE_REMOTE_LOCAL_DOMAIN: { status: 400 },
  UE_REMOTE_TOO_MANY: { status: 400 },
  UE_REMOTE_JSONP_DISABLED: { status: 403 },
  UE_STORAGE_FAILED: { status: 500 },
  UE_INDEX_FAILED: { status: 500 },
  UE_UNAUTHORIZED: { status: 401 },
  UE_FORBIDDEN: { status: 403 },
  UE_CROSS_SITE: { status: 403 },
  UE_NOT_FOUND: { status: 404 },
  UE_VALIDATION_FAILED: { status: 400 },
  UE_CONFLICT: { status: 409 },
  UE_MEDIA_TYPE_UNSUPPORTED: { status: 415 },
  UE_CALLBACK_INVALID: { status: 400 },
  UE_CONFIG_INVALID: { status: 500 },
  UE_SHUTTING_DOWN: { status: 503 },
  UE_FORMULA_INVALID: { status: 400 },
  UE_FORMULA_TOO_LONG: { status: 414 },
  UE_FORMULA_TOO_COMPLEX: { status: 422 },
  UE_FORMULA_BUSY: { status: 503 },
  UE_FORMULA_RATE_LIMITED: { status: 429 },
  UE_INTERNAL: { status: 500 },
  UE_AUTH_THROTTLED: { status: 429 },
  UE_QUOTA_EXCEEDED: { status: 413 },
  UE_AI_RATE_LIMITED: { status: 429 },
  UE_AI_BUDGET_EXCEEDED: { status: 429 },
  UE_AI_MODEL_NOT_ALLOWED: { status: 400 },
  UE_AI_PROMPT_TOO_LARGE: { status: 413 },
  UE_AI_UPSTREAM_FAILED: { status: 502 },
  UE_AI_TIMEOUT: { status: 504 },
  UE_AUTH_NOT_CONFIGURED: { status: 403 },
  UE_UPLOAD_PENDING: { status: 200 },
  UE_INDEX_NEWER: { status: 500 },
  UE_DOCUMENT_TOO_COMPLEX: { status: 422 },
  UE_DEPENDENCY_MISSING: { status: 500 },
  UE_CONVERTER_UNAVAILABLE: { status: 415 },
  UE_CONVERSION_FAILED: { status: 422 },
  UE_WORD_INVALID: { status: 422 },
  UE_WORD_MACROS: { status: 415 },
  UE_WORD_ENCRYPTED: { status: 415 },
  UE_WORD_ARCHIVE_UNSAFE: { status: 413 },
  UE_WORD_ENTITIES: { status: 422 },
  UE_WORD_TOO_MANY_PICTURES: { status: 413 },
  UE_WORD_CONVERSION_FAILED: { status: 422 },
} as const satisfies Record<string, { status: number }>

export type UeErrorCode = keyof typeof CODES

export class UeError extends Error {
  override readonly name = 'UeError'
  readonly code: UeErrorCode
  /** Safe, user-facing extra detail (never paths, hosts or stack traces). */
  readonly detail: string | undefined
  /**
   * Headers its answer carries in every shape: what the client needs to try again (`Allow`,
   * `WWW-Authenticate`, `Retry-After`).
   */
  readonly headers: Readonly<Record<string, string>> | undefined
  /** Fields for the server's log line only (where it happened), never answered. */
  readonly context: Readonly<Record<string, unknown>> | undefined

  constructor(
    code: UeErrorCode,
    options?: {
      detail?: string
      cause?: unknown
      headers?: Record<string, string>
      context?: Record<string, unknown>
    },
  ) {
    super(options?.detail ? `${code}: ${options.detail}` : code, { cause: options?.cause })
    this.code = code
    this.detail = options?.detail
    this.headers = options?.headers
    this.context = options?.context
  }

  get status(): number {
    return CODES[this.code].status
  }
}

/**
 * 5xx codes that are the moment's, not a fault: the server is leaving, busy or nearly full.
 * Any client can cause them, so they are logged as one line without a stack, never as errors.
 */
const EXPECTED_FAILURES: Partial<Record<UeErrorCode, 'info' | 'warn'>> = {
  UE_SHUTTING_DOWN: 'info',
  UE_BUSY: 'warn',
  UE_FORMULA_BUSY: 'warn',
  UE_STORAGE_FULL: 'warn',
}

/** How loudly to log a refusal: a client's mistake at debug, a fault of ours at error. */
export function refusalLevel(error: UeError): 'debug' | 'info' | 'warn' | 'error' {
  if (error.status < 500) return 'debug'
  return EXPECTED_FAILURES[error.code] ?? 'error'
}

/** The one 405: the methods a path answers go with it in `Allow`. */
export function methodNotAllowed(allowed: readonly string[]): UeError {
  return new UeError('UE_METHOD_NOT_ALLOWED', { headers: { Allow: allowed.join(', ') } })
}

/** Seconds a client is told to wait after a shutdown refusal: a restart takes a few seconds. */
export const SHUTDOWN_RETRY_AFTER = '5'

/** The refusal of a request that arrives while the server stops accepting. */
export function shuttingDown(): UeError {
  return new UeError('UE_SHUTTING_DOWN', { headers: { 'Retry-After': SHUTDOWN_RETRY_AFTER } })
}

export function isUeError(e: unknown): e is UeError {
  return e instanceof UeError
}

/**
 * What says a volume, or its owner's disk quota, is full: the errno codes, SQLite's and
 * PostgreSQL's own (`53100`), and libvips' text (its errors carry no code).
 */
const DISK_FULL_CODES = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL', '53100'])
const DISK_FULL_TEXT = /No space left on device|Disk quota exceeded/

/**
 * The code (`ENOSPC`, `EDQUOT`, `SQLITE_FULL`, …) when `e`, or an error it was caused by, says
 * the disk is full.
 */
export function diskFullCode(e: unknown): string | undefined {
  for (let err = e, depth = 0; err && typeof err === 'object' && depth < 8; depth++) {
    const code = (err as { code?: unknown }).code
    if (typeof code === 'string' && DISK_FULL_CODES.has(code)) return code
    if (!isUeError(err) && err instanceof Error && DISK_FULL_TEXT.test(err.message)) return 'ENOSPC'
    err = (err as { cause?: unknown }).cause
  }
  return undefined
}

/** Where an upload ran out of space: temp file, re-encoded image, store, tus bytes, index row. */
export type FullAt = 'spool' | 'image' | 'store' | 'tus' | 'index'

/**
 * `UE_STORAGE_FULL` for a write that ran out of space (`cause` says it is: see `diskFullCode`);
 * its log line names the step, the errno and the folder written to.
 */
export function storageFull(at: FullAt, folder: string | undefined, cause: unknown): UeError {
  const context = { at, errno: diskFullCode(cause), ...(folder ? { folder } : {}) }
  return new UeError('UE_STORAGE_FULL', { cause, context })
}
