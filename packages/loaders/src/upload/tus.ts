import type { DetailedError, HttpStack, Upload } from 'tus-js-client'
import type { EditorFile } from './editor.js'
import { type ServerSettings, withParam } from './server.js'
import type { UploadCategory } from './types.js'
import { jsonObject, refusalOf } from './xhr.js'

export interface TusOptions {
  chunkSize: number
  retryDelays: number[]
}

/** Where a tus upload ended: the final answer's upload result when it carried one, and the id. */
export interface TusEnding {
  id: string
  answer: Record<string, unknown> | undefined
}

/**
 * Sends the file with tus-js-client to `endpoint`, metadata `filename`, `filetype` and
 * `category`. The upload's URL is kept under the file's fingerprint (name, type, size, last
 * modified, endpoint and category), so the same file sent again, after a dropped connection or
 * a reload, continues from the server's offset. Failed requests are retried after
 * `retryDelays`. An abort leaves the upload on the server to be resumed.
 */
export async function tusUpload(
  s: ServerSettings,
  endpoint: string,
  category: UploadCategory,
  file: EditorFile,
  o: TusOptions,
  onProgress: (fraction: number) => void,
  signal: AbortSignal,
): Promise<TusEnding> {
  signal.throwIfAborted()
  // Loaded on the first tus upload: pages and bundles that never need it never fetch it.
  const { DefaultHttpStack, Upload } = await import('tus-js-client')
  // The query token must reach every request, also those to the upload's own URL.
  const param = await s.tokenParam()
  const base = new DefaultHttpStack({})
  const httpStack: HttpStack = {
    getName: () => 'ueditor-backend',
    createRequest: (method, url) => base.createRequest(method, withParam(url, param)),
  }
  return new Promise<TusEnding>((resolve, reject) => {
    const upload: Upload = new Upload(file.blob, {
      endpoint,
      httpStack,
      metadata: { filename: file.name, filetype: file.type, category },
      chunkSize: o.chunkSize,
      retryDelays: o.retryDelays,
      storeFingerprintForResuming: true,
      removeFingerprintOnSuccess: true,
      fingerprint: async () =>
        [
          'ueditor-backend-tus',
          file.name,
          file.type,
          file.blob.size,
          lastModified(file),
          endpoint,
          category,
        ].join('|'),
      onBeforeRequest: async (req) => {
        for (const [name, value] of Object.entries(await s.headers())) req.setHeader(name, value)
        const xhr = req.getUnderlyingObject() as XMLHttpRequest | undefined
        if (xhr && 'withCredentials' in xhr) xhr.withCredentials = s.withCredentials
      },
      onProgress: (sent, total) => onProgress(total > 0 ? sent / total : 0),
      onSuccess: ({ lastResponse }) => {
        signal.removeEventListener('abort', onAbort)
        const id = idOf(upload.url)
        if (!id) return reject(new Error('the server gave the upload no address'))
        // The request that carried the last byte answers the result (a creation that carried
        // the whole file keeps its 201); a 204, or a HEAD of a finished upload, does not.
        const status = lastResponse.getStatus()
        const body =
          status === 200 || status === 201 ? jsonObject(lastResponse.getBody() ?? '') : undefined
        resolve({ id, answer: body && typeof body.state === 'string' ? body : undefined })
      },
      onError: (e) => {
        signal.removeEventListener('abort', onAbort)
        reject(new Error(readableTusError(e)))
      },
    })
    const onAbort = () => {
      // Not terminated: the bytes stay on the server until the upload expires, to be resumed.
      upload.abort(false).finally(() => reject(signal.reason))
    }
    signal.addEventListener('abort', onAbort, { once: true })
    upload
      .findPreviousUploads()
      .then((previous) => {
        if (signal.aborted) return
        const latest = previous.sort((a, b) => b.creationTime.localeCompare(a.creationTime))[0]
        if (latest) upload.resumeFromPreviousUpload(latest)
        upload.start()
      })
      .catch(reject)
  })
}

function lastModified(file: EditorFile): number | string {
  return (file.blob as Partial<File>).lastModified ?? ''
}

/** The last path segment of the upload's URL: the server's upload id. */
export function idOf(url: string | null): string | undefined {
  if (!url) return undefined
  const path = url.split(/[?#]/)[0] ?? ''
  const segment = path.slice(path.lastIndexOf('/') + 1)
  return segment ? decodeURIComponent(segment) : undefined
}

/** The refusal's readable `state` from the server's answer, else a short description. */
function readableTusError(e: Error | DetailedError): string {
  const response = (e as DetailedError).originalResponse
  if (response)
    return refusalOf(response.getBody() ?? '') ?? `upload failed (HTTP ${response.getStatus()})`
  return 'upload failed: the connection to the server was lost'
}
