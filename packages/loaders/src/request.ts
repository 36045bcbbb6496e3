import type { LoaderOptions } from './types.js'

export interface RequestSettings {
  fetch: typeof fetch
  getToken: () => string | null | undefined | Promise<string | null | undefined>
  retries: number
  retryDelay: (retry: number) => number
  timeout: number
}

export function requestSettings(o: LoaderOptions): RequestSettings {
  const key = o.tokenKey ?? 'access_token'
  return {
    fetch: o.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    getToken: o.getToken ?? (() => readStoredToken(key)),
    retries: Math.max(0, o.retries ?? 3),
    retryDelay: o.retryDelay ?? ((retry) => retry * 1000),
    timeout: o.timeout ?? 10_000,
  }
}

function readStoredToken(key: string): string | null {
  try {
    // Through `window`: a page's storage. Node 25+ has a `localStorage` global of its own that
    // warns when read without `--localstorage-file`, and a server-side render has no token.
    const page = (globalThis as { window?: { localStorage?: Storage } }).window
    return page?.localStorage?.getItem(key) ?? null
  } catch {
    // Storage can throw (privacy mode, sandboxed iframes): no token then.
    return null
  }
}

/** Thrown for answers that must not be retried (4xx other than 429, unparsable bodies). */
class FinalError extends Error {}

const isRetryableStatus = (status: number) => status >= 500 || status === 429

/**
 * Fetches JSON with a Bearer token when one exists, retrying network errors, timeouts, 5xx and
 * 429 up to `retries` times with `retryDelay(n)` between tries. An aborted call is never
 * retried. Rejects on final failure; callers turn that into an empty result.
 */
export async function requestJson(
  s: RequestSettings,
  url: string,
  init: { method: 'GET' | 'POST'; body?: unknown },
  signal?: AbortSignal,
): Promise<unknown> {
  const token = await s.getToken()
  const headers: Record<string, string> = { Accept: 'application/json' }
  if (token) headers.Authorization = `Bearer ${token}`
  if (init.body !== undefined) headers['Content-Type'] = 'application/json'
  for (let retry = 0; ; retry++) {
    signal?.throwIfAborted()
    try {
      return await attempt(s, url, { method: init.method, headers, body: init.body }, signal)
    } catch (e) {
      if (e instanceof FinalError || signal?.aborted || retry >= s.retries) throw e
    }
    await sleep(s.retryDelay(retry + 1), signal)
  }
}

async function attempt(
  s: RequestSettings,
  url: string,
  o: { method: string; headers: Record<string, string>; body?: unknown },
  outer?: AbortSignal,
): Promise<unknown> {
  const controller = new AbortController()
  const onAbort = () => controller.abort(outer?.reason)
  outer?.addEventListener('abort', onAbort, { once: true })
  const timer = setTimeout(() => controller.abort(new Error('timeout')), s.timeout)
  try {
    const init: RequestInit = { method: o.method, headers: o.headers, signal: controller.signal }
    if (o.body !== undefined) init.body = JSON.stringify(o.body)
    const response = await s.fetch(url, init)
    if (!response.ok) {
      const message = `HTTP ${response.status}`
      if (isRetryableStatus(response.status)) throw new Error(message)
      throw new FinalError(message)
    }
    try {
      return await response.json()
    } catch {
      throw new FinalError('unparsable body')
    }
  } finally {
    clearTimeout(timer)
    outer?.removeEventListener('abort', onAbort)
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

export function joinUrl(baseUrl: string | undefined, path: string): string {
  if (!baseUrl) return path
  return `${baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`
}
