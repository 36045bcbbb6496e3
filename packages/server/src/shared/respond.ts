import { completeResponse } from './complete-body.js'
import type { UeError } from './errors.js'
import { liteHeaders } from './lite-headers.js'
import { type Locale, messageFor } from './messages.js'
import { PROTOTYPE_KEYS } from './plain-object.js'

// JSON that is also safe to read as HTML or script: the editor `eval`s several answers, JSONP
// runs as script, and material HTML travels inside JSON.
const UNSAFE_IN_SCRIPT = /[<>&\u2028\u2029]/

/** An answer serialised once, for bodies that never change (the `config` action's). */
export class SerialisedJson {
  readonly text: string
  constructor(value: unknown) {
    this.text = safeJson(value)
  }

  /** JSON text written elsewhere (a worker thread), already as `safeJson` writes it. */
  static fromText(text: string): SerialisedJson {
    return Object.assign(Object.create(SerialisedJson.prototype), { text })
  }
}

/** `JSON.stringify` with `<`, `>`, `&`, U+2028 and U+2029 written as `\u` escapes. */
export function safeJson(value: unknown): string {
  if (value instanceof SerialisedJson) return value.text
  const json = JSON.stringify(value)
  if (!UNSAFE_IN_SCRIPT.test(json)) return json
  // Five native passes: a replace callback per character costs more on HTML-heavy answers.
  return json
    .replaceAll('<', '\\u003c')
    .replaceAll('>', '\\u003e')
    .replaceAll('&', '\\u0026')
    .replaceAll('\u2028', '\\u2028')
    .replaceAll('\u2029', '\\u2029')
}

export const JSON_TYPE = 'application/json; charset=utf-8'
const SCRIPT_TYPE = 'application/javascript; charset=utf-8'
const EVENT_TYPE = 'text/event-stream; charset=utf-8'
const BASE_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
}
// Made once: spreading them per answer showed in the profile.
const JSON_HEADERS = { ...BASE_HEADERS, 'Content-Type': JSON_TYPE }
const SCRIPT_HEADERS = { ...BASE_HEADERS, 'Content-Type': SCRIPT_TYPE }
const EVENT_HEADERS = { ...BASE_HEADERS, 'Content-Type': EVENT_TYPE }

export function jsonResponse(value: unknown, status = 200, extra?: HeadersInit): Response {
  const headers = liteHeaders(JSON_HEADERS)
  if (extra) for (const [k, v] of new Headers(extra)) headers.set(k, v)
  return completeResponse(safeJson(value), { status, headers })
}

/** `callback` must have passed `isValidCallback`. */
export function jsonpResponse(callback: string, value: unknown): Response {
  return completeResponse(jsonpText(callback, value), {
    status: 200,
    headers: SCRIPT_HEADERS,
  })
}

function jsonpText(callback: string, value: unknown): string {
  // The leading comment defeats content-sniffing attacks on the first bytes (Rosetta Flash).
  return `/**/${callback}(${safeJson(value)});`
}

const RESERVED_CALLBACKS = new Set([...PROTOTYPE_KEYS, 'eval', 'Function'])

/** Accepts what UEditor generates (`bd__editor__k3j9x2`) and nothing that could inject code. */
export function isValidCallback(name: string): boolean {
  return /^[A-Za-z_$][\w$]{0,63}$/.test(name) && !RESERVED_CALLBACKS.has(name)
}

export interface ErrorResponseOptions {
  /**
   * `api` (the default): `{error: {code, message}}`, the message in English with the safe
   * detail, for integrators (materials API, files, the server's own answers). `editor`:
   * `{state, code}`, where `state` is the catalogue message the editor shows the user verbatim.
   * `event`: one server-sent `error` event (`errorEvent`), for the AI dialog's stream.
   */
  shape?: 'api' | 'editor' | 'event'
  /** The language of the message; English by default. */
  locale?: Locale
  /**
   * `http` (the default): the code's own status. `protocol`: HTTP 200, because the editor reads
   * only the bodies of 200s (`http.errorStatus`).
   */
  statusMode?: 'http' | 'protocol'
  /** A JSONP callback: when it is a valid name the answer is script (always 200), else JSON. */
  callback?: string | null | undefined
  /** More fields of an `editor` body (the catch action's `list`). */
  fields?: Record<string, unknown>
  /** Added after the error's own headers. */
  headers?: HeadersInit
}

/** What `errorResponse` answers with, for a writer that has no `Response` (the node bridge). */
export interface ErrorParts {
  status: number
  headers: Headers
  body: string
}

/** The one way a `UeError` becomes an answer: its body, status and headers. */
export function errorParts(error: UeError, o: ErrorResponseOptions = {}): ErrorParts {
  const message = messageFor(o.locale ?? 'en', error.code)
  const callback = o.shape === 'event' ? '' : (o.callback ?? '')
  const jsonp = callback !== '' && isValidCallback(callback)
  const headers = liteHeaders(
    jsonp ? SCRIPT_HEADERS : o.shape === 'event' ? EVENT_HEADERS : JSON_HEADERS,
  )
  if (error.headers) for (const [k, v] of Object.entries(error.headers)) headers.set(k, v)
  if (o.headers) for (const [k, v] of new Headers(o.headers)) headers.set(k, v)
  const status = o.statusMode === 'protocol' ? 200 : error.status
  if (o.shape === 'event') return { status, headers, body: errorEvent(error.code, message) }
  const body =
    o.shape === 'editor'
      ? { state: message, code: error.code, ...o.fields }
      : {
          error: {
            code: error.code,
            message: error.detail ? `${message}: ${error.detail}` : message,
          },
        }
  if (jsonp) return { status: 200, headers, body: jsonpText(callback, body) }
  return { status, headers, body: safeJson(body) }
}

export function errorResponse(error: UeError, o: ErrorResponseOptions = {}): Response {
  const { body, ...init } = errorParts(error, o)
  return completeResponse(body, init)
}

/**
 * One server-sent `error` event both kinds of AI client read: the dialog shows `data` of
 * `type: "error"` (it checks `type` whatever its driver), and OpenAI SDKs throw on an `error`
 * object.
 */
export function errorEvent(code: string, message: string): string {
  return `data: ${safeJson({ type: 'error', data: message, code, error: { message, code } })}\n\n`
}
