import { isBlob } from './blob.js'

/** One answer of `send`. */
export interface SentAnswer {
  status: number
  body: string
  header(name: string): string | null
}

export interface SendRequest {
  method: 'POST' | 'PUT'
  url: string
  body: Blob | FormData
  headers?: Record<string, string>
  withCredentials?: boolean
  /** Bytes of the body sent so far (fetch cannot tell upload progress, XHR can). */
  onProgress?: (sent: number) => void
  signal: AbortSignal
}

/**
 * Sends a body with XMLHttpRequest for its upload progress; rejects on network errors and
 * abort. Where there is no XMLHttpRequest (Node), `fetchImpl` sends it and progress comes once,
 * at the end.
 */
export function send(r: SendRequest, fetchImpl: typeof fetch): Promise<SentAnswer> {
  if (typeof XMLHttpRequest === 'undefined') return sendWithFetch(r, fetchImpl)
  return new Promise((resolve, reject) => {
    if (r.signal.aborted) return reject(r.signal.reason)
    const xhr = new XMLHttpRequest()
    const onAbort = () => xhr.abort()
    const done = () => r.signal.removeEventListener('abort', onAbort)
    xhr.open(r.method, r.url)
    xhr.withCredentials = r.withCredentials ?? false
    for (const [name, value] of Object.entries(r.headers ?? {})) xhr.setRequestHeader(name, value)
    xhr.upload.onprogress = (e) => r.onProgress?.(e.loaded)
    xhr.onload = () => {
      done()
      resolve({
        status: xhr.status,
        body: xhr.responseText,
        header: (name) => xhr.getResponseHeader(name),
      })
    }
    xhr.onerror = () => {
      done()
      reject(new Error(`network error on ${r.method}`))
    }
    xhr.onabort = () => {
      done()
      reject(r.signal.reason ?? new DOMException('aborted', 'AbortError'))
    }
    r.signal.addEventListener('abort', onAbort, { once: true })
    xhr.send(r.body)
  })
}

async function sendWithFetch(r: SendRequest, fetchImpl: typeof fetch): Promise<SentAnswer> {
  const response = await fetchImpl(r.url, {
    method: r.method,
    body: r.body,
    headers: r.headers ?? {},
    credentials: r.withCredentials ? 'include' : 'same-origin',
    signal: r.signal,
  })
  const body = await response.text()
  r.onProgress?.(isBlob(r.body) ? r.body.size : Number.MAX_SAFE_INTEGER)
  return { status: response.status, body, header: (name) => response.headers.get(name) }
}

/** Parses a JSON object body, or undefined. */
export function jsonObject(body: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(body)
    return typeof v === 'object' && v !== null && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}

/** The server's readable refusal in a body: an editor answer's `state`, or `error.message`. */
export function refusalOf(body: string): string | undefined {
  const answer = jsonObject(body)
  if (typeof answer?.state === 'string' && answer.state !== '') return answer.state
  const error = answer?.error as { message?: unknown } | undefined
  return typeof error?.message === 'string' && error.message !== '' ? error.message : undefined
}
