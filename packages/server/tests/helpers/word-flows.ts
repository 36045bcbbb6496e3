import { multipartBody, webUploaderFields } from './multipart.js'
import type { TestServer } from './start-server.js'

/**
 * The two stock Word flows of UEditor Plus, request for request (docs/protocol.md, "The
 * WebUploader dialogs" and "Word import"), sent as a same-origin page's browser sends them.
 */

export interface WordAnswer {
  status: number
  state: string
  code?: string
  url?: string
  type?: string
  original?: string
}

export interface FlowOptions {
  /** What `serverUrl` carries after the endpoint's path, e.g. `token=…` (no leading `?`). */
  serverQuery?: string
  /** Cookies the browser sends by itself on a same-origin request. */
  cookie?: string
  /** The page's origin; the server's own by default (same origin). */
  origin?: string
}

/** What Chromium adds to a same-origin XHR POST (and the cookie jar's `Cookie`). */
function browserHeaders(srv: TestServer, o: FlowOptions): Record<string, string> {
  const origin = o.origin ?? new URL(srv.url).origin
  const headers: Record<string, string> = {
    Origin: origin,
    'Sec-Fetch-Site': origin === new URL(srv.url).origin ? 'same-origin' : 'cross-site',
    'Sec-Fetch-Mode': 'cors',
    'Sec-Fetch-Dest': 'empty',
  }
  if (o.cookie) headers.Cookie = o.cookie
  return headers
}

/** `getActionUrl(imageActionName)`: `serverUrl` plus `?action=` or `&action=`. */
function actionUrl(srv: TestServer, o: FlowOptions): string {
  const base = `${srv.url}${srv.ue.config.routes.editor}`
  return o.serverQuery ? `${base}?${o.serverQuery}&action=image` : `${base}?action=image`
}

async function answer(res: Response): Promise<WordAnswer> {
  const body = (await res.json()) as Omit<WordAnswer, 'status'>
  return { status: res.status, ...body }
}

/**
 * The paste flow's dialog (`dialogs/wordimage`): WebUploader posts the picked file to the image
 * action with its five fields first and the file in `imageFieldName` under its own name; no
 * `serverHeaders`, no `serverparam`, no `X-Requested-With`.
 */
export async function wordImageDialog(
  srv: TestServer,
  file: { name: string; bytes: Buffer; type: string },
  o: FlowOptions = {},
  fieldName = 'upfile',
): Promise<WordAnswer> {
  const { body, contentType } = multipartBody([
    ...webUploaderFields(file.name, file.bytes.length, file.type),
    { name: fieldName, filename: file.name, contentType: file.type, value: file.bytes },
  ])
  const res = await fetch(actionUrl(srv, o), {
    method: 'POST',
    headers: { ...browserHeaders(srv, o), 'Content-Type': contentType },
    body,
  })
  return answer(res)
}

/**
 * The import flow (`dialogs/contentimport`): for each picture mammoth finds in the `.docx`, a
 * synchronous XHR with a Blob of the picture's content type in the hard-coded field `upfile`,
 * named `blob.<subtype>` (`image/x-emf` → `blob.x-emf`), then `type=ajax`; its only header of
 * its own is `X-Requested-With: XMLHttpRequest`.
 */
export async function contentImport(
  srv: TestServer,
  picture: { bytes: Buffer; contentType: string },
  o: FlowOptions = {},
): Promise<WordAnswer> {
  const subtype = picture.contentType.slice('image/'.length) || 'png'
  const { body, contentType } = multipartBody([
    {
      name: 'upfile',
      filename: `blob.${subtype}`,
      contentType: picture.contentType,
      value: picture.bytes,
    },
    { name: 'type', value: 'ajax' },
  ])
  const res = await fetch(actionUrl(srv, o), {
    method: 'POST',
    headers: {
      ...browserHeaders(srv, o),
      'Content-Type': contentType,
      'X-Requested-With': 'XMLHttpRequest',
    },
    body,
  })
  return answer(res)
}
