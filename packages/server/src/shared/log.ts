import { createRequire } from 'node:module'
import { pino, stdSerializers } from 'pino'
import type PinoPretty from 'pino-pretty'
import { dependencyMissing } from './optional-deps.js'
import { requestContext } from './request-context.js'
import type { Logger } from './types.js'

export type LogLevel = 'debug' | 'info' | 'warn' | 'error'
export type LogFormat = 'auto' | 'json' | 'pretty'

export interface LoggerOptions {
  level?: LogLevel | 'silent'
  /** `auto`: readable lines when the destination is a terminal, JSON lines otherwise. */
  format?: LogFormat
  /** Default: stderr. Tests pass a stream to read the lines back. */
  destination?: NodeJS.WritableStream & { isTTY?: boolean }
}

// Keys whose values are secrets wherever they appear; the header names are lower case as
// `Headers` and node:http give them. Checked in the one walk that also scrubs strings (pino's
// path-based redaction cost more than the rest of an access line).
const SECRET_KEYS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'password',
  'secretAccessKey',
  'accessKeyId',
  'sessionToken',
  'token',
  'tokens',
  'adminTokens',
  'readTokens',
  'access_token',
  'apiKey',
  'secret',
])
const REDACTED = '[Redacted]'

// Secrets that hide inside strings: `scheme://user:password@host`, `Bearer <token>` and
// token-like query parameters (an error message may quote a URL).
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:)[^@\s/]+@/gi
const BEARER = /\b(Bearer\s+)[^\s"',;]+/gi
const QUERY_SECRET =
  /([?&](?:access_token|token|api_key|apikey|key|password|secret|signature|X-Amz-Signature|X-Amz-Credential)=)[^&\s"']+/gi

// Every pattern below needs one of these; most strings (paths, routes, keys) have none.
const MAY_HIDE_SECRET = /[@=]|bearer/i

export function scrubString(s: string): string {
  if (!MAY_HIDE_SECRET.test(s)) return s
  return s
    .replace(URL_PASSWORD, '$1[Redacted]@')
    .replace(BEARER, '$1[Redacted]')
    .replace(QUERY_SECRET, '$1[Redacted]')
}

// Top-level keys whose Error values go through pino's error serializer (then get scrubbed).
const ERROR_KEYS = ['err', 'error', 'cause']
const serializeError = (e: unknown) => scrub(e instanceof Error ? stdSerializers.err(e) : e)

function scrub(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrubString(value)
  if (depth > 6 || value === null || typeof value !== 'object') return value
  if (value instanceof Error) return scrub(stdSerializers.err(value), depth + 1)
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1))
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value))
    out[k] = SECRET_KEYS.has(k) ? REDACTED : scrub(v, depth + 1)
  return out
}

/**
 * The server's logger: pino JSON lines (or pino-pretty on a terminal), secrets redacted by key
 * and scrubbed from strings, and the id of the request being handled on every line.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const destination = options.destination ?? process.stderr
  const format = options.format ?? 'auto'
  const readable = format === 'pretty' || (format === 'auto' && destination.isTTY === true)
  const pretty = readable ? loadPretty() : null
  if (format === 'pretty' && !pretty)
    throw dependencyMissing([{ package: 'pino-pretty', setting: 'logFormat "pretty"' }])
  // `auto` on a terminal without pino-pretty installed writes JSON lines.
  const stream = pretty
    ? pretty({ destination, colorize: destination.isTTY === true, sync: true })
    : destination
  const logger = pino(
    {
      level: options.level ?? 'info',
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (o) => {
          const out: Record<string, unknown> = {}
          for (const [k, v] of Object.entries(o))
            out[k] = SECRET_KEYS.has(k)
              ? REDACTED
              : ERROR_KEYS.includes(k) && v instanceof Error
                ? v
                : scrub(v, 1)
          return out
        },
      },
      serializers: Object.fromEntries(ERROR_KEYS.map((k) => [k, serializeError])),
    },
    stream,
  )
  const text = (msg?: string) => (msg === undefined ? undefined : scrubString(msg))
  return {
    debug: (o, msg) => logger.debug(o, text(msg)),
    info: (o, msg) => logger.info(o, text(msg)),
    warn: (o, msg) => logger.warn(o, text(msg)),
    error: (o, msg) => logger.error(o, text(msg)),
  }
}

/** pino-pretty, an optional dependency loaded only for readable lines; null when not installed. */
function loadPretty(): typeof PinoPretty | null {
  try {
    return createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty
  } catch (e) {
    const missing = (e as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND'
    if (missing && (e as Error).message.includes("'pino-pretty'")) return null
    throw e
  }
}

/**
 * `log` for code handling `request`: every line carries the request's id (`reqId`, the id its
 * answer returns in `X-Request-Id`). `log` itself for a request that has no id.
 */
export function requestLogger(log: Logger, request: Request): Logger {
  const reqId = requestContext(request)?.requestId
  if (reqId === undefined) return log
  return new RequestLogger(log, reqId)
}

// One object per request, its methods shared: most requests log nothing through it.
class RequestLogger implements Logger {
  constructor(
    private readonly log: Logger,
    private readonly reqId: string,
  ) {}
  debug(o: object, msg?: string) {
    this.log.debug({ reqId: this.reqId, ...o }, msg)
  }
  info(o: object, msg?: string) {
    this.log.info({ reqId: this.reqId, ...o }, msg)
  }
  warn(o: object, msg?: string) {
    this.log.warn({ reqId: this.reqId, ...o }, msg)
  }
  error(o: object, msg?: string) {
    this.log.error({ reqId: this.reqId, ...o }, msg)
  }
}

/** Kept for callers of the first logger: JSON lines on stderr. */
export function consoleLogger(minLevel: LogLevel = 'info'): Logger {
  return createLogger({ level: minLevel, format: 'json' })
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} }
