import type { EditorFile } from './editor.js'
import { type ServerSettings, sleep } from './server.js'
import type { UploadCategory } from './types.js'
import { refusalOf, send } from './xhr.js'

export interface DirectOptions {
  multipartThreshold: number
  partSize: number
  retryDelays: number[]
}

/** Where a direct upload ended: the upload id, and the complete answer's result when it had one. */
export interface DirectEnding {
  id: string
  answer: Record<string, unknown> | undefined
}

/**
 * Sends the file straight to the bucket through the server's signing routes (the ones
 * `@uppy/aws-s3` calls): one presigned POST for a small file, a multipart upload for a big one.
 * The server chooses the key; the bucket never sees a credential of ours.
 */
export function directUpload(
  s: ServerSettings,
  base: string,
  category: UploadCategory,
  file: EditorFile,
  o: DirectOptions,
  onProgress: (fraction: number) => void,
  signal: AbortSignal,
): Promise<DirectEnding> {
  const routes = signingRoutes(s, base, signal)
  const metadata = { name: file.name, type: file.type, category, size: String(file.blob.size) }
  const lastModified = (file.blob as Partial<File>).lastModified ?? ''
  const resumeKey = [file.name, file.type, file.blob.size, lastModified, base, category].join('|')
  return file.blob.size <= o.multipartThreshold
    ? simple(routes, file, metadata, onProgress, signal)
    : multipart(routes, file, metadata, o, resumeKey, onProgress, signal)
}

async function simple(
  routes: SigningRoutes,
  file: EditorFile,
  metadata: Record<string, string>,
  onProgress: (fraction: number) => void,
  signal: AbortSignal,
): Promise<DirectEnding> {
  const query = new URLSearchParams({ filename: file.name, type: file.type })
  for (const [k, v] of Object.entries(metadata)) query.set(`metadata[${k}]`, v)
  const params = await routes.json('GET', `/params?${query}`)
  const id = stringField(params, 'id')
  const url = stringField(params, 'url')
  const fields = params.fields
  if (typeof fields !== 'object' || fields === null)
    throw new Error('no upload form from the server')
  const form = new FormData()
  for (const [k, v] of Object.entries(fields as Record<string, unknown>)) form.append(k, String(v))
  form.append('file', file.blob, file.name)
  const answer = await send(
    {
      method: 'POST',
      url,
      body: form,
      onProgress: (sent) => onProgress(Math.min(1, sent / Math.max(1, file.blob.size))),
      signal,
    },
    routes.fetch,
  )
  if (answer.status < 200 || answer.status >= 300)
    throw new Error(`the bucket refused the upload (HTTP ${answer.status})`)
  return { id, answer: undefined }
}

/** A multipart upload this browser started, kept so the same file sent again continues it. */
interface Started {
  id: string
  uploadId: string
  key: string
  partSize: number
}

async function multipart(
  routes: SigningRoutes,
  file: EditorFile,
  metadata: Record<string, string>,
  o: DirectOptions,
  resumeKey: string,
  onProgress: (fraction: number) => void,
  signal: AbortSignal,
): Promise<DirectEnding> {
  const size = file.blob.size
  const resumed = await resume(routes, resumeKey)
  let started = resumed?.started
  if (!started) {
    const created = await routes.json('POST', '/multipart', {
      filename: file.name,
      type: file.type,
      metadata,
    })
    started = {
      id: stringField(created, 'id'),
      uploadId: stringField(created, 'uploadId'),
      key: stringField(created, 'key'),
      partSize: Math.max(o.partSize, 5 * 1024 * 1024, Math.ceil(size / 10_000)),
    }
    remember(resumeKey, started)
  }
  const { id, partSize } = started
  const at = `/multipart/${encodeURIComponent(started.uploadId)}`
  const keyQuery = `?${new URLSearchParams({ key: started.key })}`
  const count = Math.max(1, Math.ceil(size / partSize))
  const sentOf = new Array<number>(count).fill(0)
  const report = () => onProgress(sentOf.reduce((a, b) => a + b, 0) / Math.max(1, size))
  const parts: { PartNumber: number; ETag: string }[] = []
  try {
    for (let n = 1; n <= count; n++) {
      const chunk = file.blob.slice((n - 1) * partSize, Math.min(size, n * partSize))
      const held = resumed?.parts.get(n)
      const etag =
        held && held.size === chunk.size
          ? held.etag
          : await withRetries(o.retryDelays, signal, async () => {
              sentOf[n - 1] = 0
              const signed = await routes.json('GET', `${at}/${n}${keyQuery}`)
              const answer = await send(
                {
                  method: 'PUT',
                  url: stringField(signed, 'url'),
                  body: chunk,
                  onProgress: (sent) => {
                    sentOf[n - 1] = sent
                    report()
                  },
                  signal,
                },
                routes.fetch,
              )
              if (answer.status < 200 || answer.status >= 300)
                throw new Error(`the bucket refused part ${n} (HTTP ${answer.status})`)
              const tag = answer.header('ETag')
              // The bucket's CORS rule must expose ETag, or no part can be completed.
              if (!tag)
                throw new FinalError('the bucket does not expose the ETag header (CORS rule)')
              return tag
            })
      sentOf[n - 1] = chunk.size
      report()
      parts.push({ PartNumber: n, ETag: etag })
    }
    const done = await routes.json('POST', `${at}/complete${keyQuery}`, { parts })
    forget(resumeKey)
    return { id, answer: typeof done.state === 'string' ? done : undefined }
  } catch (e) {
    // Cancelled or cut off: the parts stay for the same file sent again (the server removes
    // them when the upload expires). Refused: nothing is left half-sent.
    if (e instanceof FinalError) {
      forget(resumeKey)
      await routes.json('DELETE', `${at}${keyQuery}`, undefined, true).catch(() => {})
    }
    throw e
  }
}

/** The remembered upload of this file and the parts the bucket holds, if it still lives. */
async function resume(
  routes: SigningRoutes,
  resumeKey: string,
): Promise<{ started: Started; parts: Map<number, { etag: string; size: number }> } | undefined> {
  const started = recalled(resumeKey)
  if (!started) return undefined
  try {
    const keyQuery = `?${new URLSearchParams({ key: started.key })}`
    const listed = await routes.call(
      'GET',
      `/multipart/${encodeURIComponent(started.uploadId)}${keyQuery}`,
    )
    const parts = new Map<number, { etag: string; size: number }>()
    for (const p of Array.isArray(listed) ? listed : []) {
      const n = Number(p?.PartNumber)
      if (Number.isInteger(n) && typeof p?.ETag === 'string')
        parts.set(n, { etag: p.ETag, size: Number(p.Size) })
    }
    return { started, parts }
  } catch (e) {
    // Expired, finished or not ours: start afresh.
    if (e instanceof FinalError) {
      forget(resumeKey)
      return undefined
    }
    throw e
  }
}

const STORE_PREFIX = 'ueditor-backend-s3::'

function storage(): Storage | undefined {
  try {
    return (globalThis as { localStorage?: Storage }).localStorage
  } catch {
    return undefined
  }
}

function recalled(resumeKey: string): Started | undefined {
  try {
    const v = JSON.parse(storage()?.getItem(STORE_PREFIX + resumeKey) ?? 'null')
    return typeof v?.id === 'string' &&
      typeof v.uploadId === 'string' &&
      typeof v.key === 'string' &&
      Number.isInteger(v.partSize)
      ? v
      : undefined
  } catch {
    return undefined
  }
}

function remember(resumeKey: string, started: Started): void {
  try {
    storage()?.setItem(STORE_PREFIX + resumeKey, JSON.stringify(started))
  } catch {
    // Full or forbidden storage: the upload works, it just cannot be resumed after a reload.
  }
}

function forget(resumeKey: string): void {
  try {
    storage()?.removeItem(STORE_PREFIX + resumeKey)
  } catch {}
}

/** An error a retry cannot fix. */
class FinalError extends Error {}

async function withRetries<T>(
  delays: number[],
  signal: AbortSignal,
  work: () => Promise<T>,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work()
    } catch (e) {
      const delay = delays[attempt]
      if (e instanceof FinalError || signal.aborted || delay === undefined) throw e
      await sleep(delay, signal)
    }
  }
}

interface SigningRoutes {
  fetch: typeof fetch
  /** One call's parsed JSON answer; refusals throw their readable message. */
  call(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: unknown,
    ignoreSignal?: boolean,
  ): Promise<unknown>
  /** A call whose answer must be a JSON object. */
  json(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: unknown,
    ignoreSignal?: boolean,
  ): Promise<Record<string, unknown>>
}

/** The server's signing routes under `base`, with the service's credentials. */
function signingRoutes(s: ServerSettings, base: string, signal: AbortSignal): SigningRoutes {
  const routes: SigningRoutes = {
    fetch: s.fetch,
    async call(method, path, body, ignoreSignal = false) {
      const url = await s.withToken(`${base.replace(/\/+$/, '')}/s3${path}`)
      const headers: Record<string, string> = {
        Accept: 'application/json',
        ...(await s.headers()),
      }
      if (body !== undefined) headers['Content-Type'] = 'application/json'
      const response = await s.fetch(url, {
        method,
        headers,
        credentials: s.withCredentials ? 'include' : 'same-origin',
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        ...(ignoreSignal ? {} : { signal }),
      })
      const text = await response.text()
      if (!response.ok) {
        const message = refusalOf(text) ?? `HTTP ${response.status}`
        // A refusal (4xx but 429) is final; the server's readable message is what the user sees.
        if (response.status < 500 && response.status !== 429) throw new FinalError(message)
        throw new Error(message)
      }
      try {
        return JSON.parse(text)
      } catch {
        throw new Error('the signing route answered no JSON')
      }
    },
    async json(method, path, body, ignoreSignal) {
      const answer = await routes.call(method, path, body, ignoreSignal)
      if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
        throw new Error('the signing route answered no JSON object')
      return answer as Record<string, unknown>
    },
  }
  return routes
}

function stringField(o: Record<string, unknown>, name: string): string {
  const v = o[name]
  if (typeof v !== 'string' || v === '') throw new Error(`the server's answer has no ${name}`)
  return v
}
