import type { UploadServiceOptions } from './types.js'

/** The credentials and transport every request of one `uploadService` shares. */
export interface ServerSettings {
  serverUrl: string
  fetch: typeof fetch
  withCredentials: boolean
  /** Headers carrying the token (none without one). */
  headers(): Promise<Record<string, string>>
  /** `url` with the token query parameter, when one is configured and a token exists. */
  withToken(url: string): Promise<string>
  /** The token query parameter as `[name, value]`, when one is configured and a token exists. */
  tokenParam(): Promise<[string, string] | undefined>
}

export function serverSettings(o: UploadServiceOptions): ServerSettings {
  const readToken = async () => {
    const t = typeof o.token === 'function' ? await o.token() : o.token
    return typeof t === 'string' && t !== '' ? t : undefined
  }
  const header = o.tokenHeader ?? 'Authorization'
  return {
    serverUrl: o.serverUrl,
    fetch: o.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    withCredentials: o.withCredentials ?? false,
    async headers() {
      const token = await readToken()
      if (!token) return {}
      return { [header]: header.toLowerCase() === 'authorization' ? `Bearer ${token}` : token }
    },
    async tokenParam() {
      const token = o.tokenQuery ? await readToken() : undefined
      return o.tokenQuery && token ? [o.tokenQuery, token] : undefined
    },
    async withToken(url) {
      return withParam(url, await this.tokenParam())
    },
  }
}

/** `url` with one query parameter set, keeping its form (relative or absolute). */
export function withParam(url: string, param: [string, string] | undefined): string {
  if (!param) return url
  const u = new URL(url, pageBase())
  u.searchParams.set(param[0], param[1])
  return sameForm(url, u)
}

function pageBase(): string {
  const here = (globalThis as { location?: { href?: string } }).location?.href
  return here ?? 'http://localhost/'
}

/** Keeps a relative URL relative (the page's origin), an absolute one absolute. */
function sameForm(original: string, u: URL): string {
  return isAbsolute(original) ? u.href : u.pathname + u.search + u.hash
}

/** `serverUrl` with `action` (and extra parameters) appended, as the editor builds it. */
export function actionUrl(serverUrl: string, action: string, extra: Record<string, string> = {}) {
  const query = new URLSearchParams({ action, ...extra }).toString()
  return serverUrl + (serverUrl.includes('?') ? '&' : '?') + query
}

/** Resolves a URL of the config answer (`uploadTusUrl`, `uploadDirectUrl`) against `serverUrl`. */
export function resolveServerUrl(serverUrl: string, url: string): string {
  const resolved = new URL(url, new URL(serverUrl, pageBase()))
  return isAbsolute(url) ? resolved.href : sameForm(serverUrl, resolved)
}

const isAbsolute = (url: string) => /^[a-z][a-z0-9+.-]*:/i.test(url) || url.startsWith('//')

/** GET JSON from the server with the credentials; non-2xx and unparsable bodies reject. */
export async function getJson(
  s: ServerSettings,
  url: string,
  signal?: AbortSignal,
): Promise<Record<string, unknown>> {
  const response = await s.fetch(await s.withToken(url), {
    method: 'GET',
    headers: { Accept: 'application/json', ...(await s.headers()) },
    credentials: s.withCredentials ? 'include' : 'same-origin',
    ...(signal ? { signal } : {}),
  })
  if (!response.ok) throw new Error(`HTTP ${response.status}`)
  const body: unknown = await response.json()
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new Error('not a JSON object')
  return body as Record<string, unknown>
}

/** Reads the config answer once per service; a failed read is not kept, the next call retries. */
export function configReader(s: ServerSettings) {
  let answer: Promise<Record<string, unknown>> | undefined
  return (signal?: AbortSignal) => {
    answer ??= getJson(s, actionUrl(s.serverUrl, 'config')).catch((e) => {
      answer = undefined
      throw e
    })
    return signal ? abortable(answer, signal) : answer
  }
}

/** `promise`, or the signal's reason as soon as it aborts. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

export const PENDING = 'UE_UPLOAD_PENDING'

/**
 * The ending's result: asks `?action=uploadresult&id=` while the server answers
 * `UE_UPLOAD_PENDING` (or a request fails, three times in a row at most), waiting 250 ms, then
 * 1.5 times longer each time up to 5 s, for at most `timeoutMs`. Answers the first answer that
 * is not pending: a success or a refusal.
 */
export async function pollResult(
  s: ServerSettings,
  id: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs
  let wait = 250
  let failures = 0
  for (;;) {
    try {
      const answer = await getJson(s, actionUrl(s.serverUrl, 'uploadresult', { id }), signal)
      if (answer.code !== PENDING) return answer
      failures = 0
    } catch (e) {
      if (signal.aborted || ++failures >= 3) throw e
    }
    if (Date.now() + wait > deadline)
      throw new Error('the server did not finish the upload in time')
    await sleep(wait, signal)
    wait = Math.min(wait * 1.5, 5_000)
  }
}

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal.reason)
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}
