import type { EditorFile } from './editor.js'
import { type ServerSettings, sleep } from './server.js'
import type { UploadCategory } from './types.js'
import { jsonObject, refusalOf, send } from './xhr.js'

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
  return file.blob.size <= o.multipartThreshold
    ? simple(routes, file, metadata, onProgress, signal)
    : multipart(routes, file, metadata, o, onProgress, signal)
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

async function multipart(
  routes: SigningRoutes,
  file: EditorFile,
  metadata: Record<string, string>,
  o: DirectOptions,
  onProgress: (fraction: number) => void,
  signal: AbortSignal,
): Promise<DirectEnding> {
  const created = await routes.json('POST', '/multipart', {
    filename: file.name,
    type: file.type,
    metadata,
  })
  const id = stringField(created, 'id')
  const uploadId = stringField(created, 'uploadId')
  const key = stringField(created, 'key')
  const at = `/multipart/${encodeURIComponent(uploadId)}`
  const keyQuery = `?${new URLSearchParams({ key })}`
  const size = file.blob.size
  const partSize = Math.max(o.partSize, 5 * 1024 * 1024, Math.ceil(size / 10_000))
  const count = Math.max(1, Math.ceil(size / partSize))
  const sentOf = new Array<number>(count).fill(0)
  const report = () => onProgress(sentOf.reduce((a, b) => a + b, 0) / Math.max(1, size))
  const parts: { PartNumber: number; ETag: string }[] = []
  try {
    for (let n = 1; n <= count; n++) {
      const chunk = file.blob.slice((n - 1) * partSize, Math.min(size, n * partSize))
      const etag = await withRetries(o.retryDelays, signal, async () => {
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
        if (!tag) throw new FinalError('the bucket does not expose the ETag header (CORS rule)')
        return tag
      })
      sentOf[n - 1] = chunk.size
      report()
      parts.push({ PartNumber: n, ETag: etag })
    }
    const done = await routes.json('POST', `${at}/complete${keyQuery}`, { parts })
    return { id, answer: typeof done.state === 'string' ? done : undefined }
  } catch (e) {
    // Leave nothing half-sent in the bucket: abort the multipart upload (best effort).
    await routes.json('DELETE', `${at}${keyQuery}`, undefined, true).catch(() => {})
    throw e
  }
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
  json(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: unknown,
    ignoreSignal?: boolean,
  ): Promise<Record<string, unknown>>
}

/** The server's signing routes under `base`, with the service's credentials. */
function signingRoutes(s: ServerSettings, base: string, signal: AbortSignal): SigningRoutes {
  return {
    fetch: s.fetch,
    async json(method, path, body, ignoreSignal = false) {
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
      const answer = jsonObject(text)
      if (!answer) throw new Error('the signing route answered no JSON object')
      return answer
    },
  }
}

function stringField(o: Record<string, unknown>, name: string): string {
  const v = o[name]
  if (typeof v !== 'string' || v === '') throw new Error(`the server's answer has no ${name}`)
  return v
}
