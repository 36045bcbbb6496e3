import { completeResponse } from '../shared/complete-body.js'

// JSON that is also safe to read as HTML or script: the client `eval`s several responses.
const UNSAFE_IN_SCRIPT = /[<>&\u2028\u2029]/g

/** An answer serialised once, for bodies that never change (the `config` action's). */
export class SerialisedJson {
  readonly text: string
  constructor(value: unknown) {
    this.text = safeJson(value)
  }
}

export function safeJson(value: unknown): string {
  if (value instanceof SerialisedJson) return value.text
  return JSON.stringify(value).replace(
    UNSAFE_IN_SCRIPT,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )
}

const BASE_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
}

export function jsonResponse(value: unknown, status = 200, extra: HeadersInit = {}): Response {
  const headers = new Headers({
    ...BASE_HEADERS,
    'Content-Type': 'application/json; charset=utf-8',
  })
  for (const [k, v] of new Headers(extra)) headers.set(k, v)
  return completeResponse(safeJson(value), { status, headers })
}

export function jsonpResponse(callback: string, value: unknown): Response {
  // The leading comment defeats content-sniffing attacks on the first bytes (Rosetta Flash).
  return completeResponse(`/**/${callback}(${safeJson(value)});`, {
    status: 200,
    headers: { ...BASE_HEADERS, 'Content-Type': 'application/javascript; charset=utf-8' },
  })
}

/** Accepts what UEditor generates (`bd__editor__k3j9x2`) and nothing that could inject code. */
export function isValidCallback(name: string): boolean {
  return /^[A-Za-z_$][\w$]{0,63}$/.test(name) && !RESERVED_CALLBACKS.has(name)
}

const RESERVED_CALLBACKS = new Set(['__proto__', 'constructor', 'prototype', 'eval', 'Function'])
