import type { EditorFile } from './editor.js'
import { actionUrl, type ServerSettings } from './server.js'
import type { UploadCategory } from './types.js'
import { jsonObject, send } from './xhr.js'

/**
 * The editor's own way: one multipart POST to `?action=<category action>` with the file in
 * the configured field name. Answers the server's upload answer.
 */
export async function postUpload(
  s: ServerSettings,
  config: Record<string, unknown>,
  category: UploadCategory,
  file: EditorFile,
  onProgress: (fraction: number) => void,
  signal: AbortSignal,
): Promise<unknown> {
  const action = config[`${category}ActionName`]
  const field = config[`${category}FieldName`]
  if (typeof action !== 'string' || typeof field !== 'string')
    throw new Error(`the server's config has no ${category} upload`)
  const form = new FormData()
  form.append(field, file.blob, file.name)
  const answer = await send(
    {
      method: 'POST',
      url: await s.withToken(actionUrl(s.serverUrl, action)),
      body: form,
      headers: { Accept: 'application/json', ...(await s.headers()) },
      withCredentials: s.withCredentials,
      onProgress: (sent) => onProgress(Math.min(1, sent / Math.max(1, file.blob.size))),
      signal,
    },
    s.fetch,
  )
  const body = jsonObject(answer.body)
  if (!body) throw new Error(`upload failed (HTTP ${answer.status})`)
  return body
}
