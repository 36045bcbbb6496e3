import type { Authenticator } from '../auth/authenticator.js'
import { isCrossSite } from '../auth/cross-site.js'
import { isUeError, UeError } from '../shared/errors.js'
import { assertIdentityEncoding, type BodyTimeouts, readBodyBytes } from '../shared/request-body.js'
import { urlOf } from '../shared/request-url.js'
import { jsonResponse } from '../shared/respond.js'
import type { FetchHandler } from '../shared/types.js'
import { type DocumentActor, type DocumentService, documentId } from './service.js'

export interface DocumentsHandlerOptions {
  service: DocumentService
  authenticator: Authenticator
  /** The mount path (`routes.documents`); a document is `<basePath>/<id>`. */
  basePath: string
  maxBodyBytes: number
  timeouts: BodyTimeouts
  corsOrigins: readonly string[]
}

const REALM = 'Bearer realm="documents"'

/**
 * `PUT <base>/<id>` (the article as `text/html`, or JSON `{"html": "…"}`) answers the cleaned
 * article and the files it uses; `GET` answers the references and when they were saved;
 * `DELETE` drops them. The id is the path segment after the base, percent-decoded. The route
 * list checks methods, CORS and the error shape (`{error: {code, message}}`).
 */
export function createDocumentsHandler(o: DocumentsHandlerOptions): FetchHandler {
  const prefix = `${o.basePath.replace(/\/+$/, '')}/`
  const corsOrigins = new Set(o.corsOrigins)
  return async (request) => {
    const url = urlOf(request)
    const id = idOf(url.pathname, prefix)
    const actor = await actorOf(request, url, o.authenticator, corsOrigins)
    switch (request.method) {
      case 'PUT': {
        const html = await articleOf(request, o.maxBodyBytes, o.timeouts)
        return jsonResponse(await o.service.save(id, html, actor))
      }
      case 'DELETE':
        return jsonResponse(await o.service.remove(id, actor))
      default:
        return jsonResponse(await o.service.get(id, actor))
    }
  }
}

function idOf(pathname: string, prefix: string): string {
  if (!pathname.startsWith(prefix)) throw new UeError('UE_NOT_FOUND')
  const raw = pathname.slice(prefix.length)
  if (raw === '' || raw.includes('/')) throw new UeError('UE_NOT_FOUND')
  let decoded: string
  try {
    decoded = decodeURIComponent(raw)
  } catch {
    throw new UeError('UE_VALIDATION_FAILED', { detail: 'the document id is not valid UTF-8' })
  }
  return documentId(decoded)
}

/**
 * The shared authenticator decides who calls. A signed-in user writes only documents they own;
 * an admin (or a service credential, which the auth setup grants admin) any; in mode none, where
 * only this machine may call, anyone may. A write authorised by the hook (a cookie) from
 * another site's page is refused, as for the editor and the materials API.
 */
async function actorOf(
  request: Request,
  url: URL,
  authenticator: Authenticator,
  corsOrigins: ReadonlySet<string>,
): Promise<DocumentActor> {
  let principal: Awaited<ReturnType<Authenticator['authenticate']>>
  try {
    principal = await authenticator.authenticate(request, url)
  } catch (e) {
    if (isUeError(e) && e.code === 'UE_UNAUTHORIZED')
      throw new UeError(e.code, {
        detail: e.detail,
        headers: {
          'WWW-Authenticate': e.detail === 'missing' ? REALM : `${REALM}, error="invalid_token"`,
        },
      })
    if (isUeError(e) && e.code === 'UE_AUTH_THROTTLED')
      throw new UeError(e.code, { detail: e.detail, headers: { 'Retry-After': '60' } })
    throw e
  }
  const writes = request.method === 'PUT' || request.method === 'DELETE'
  if (writes && principal.channel === 'hook' && isCrossSite(request, url, corsOrigins))
    throw new UeError('UE_CROSS_SITE')
  return {
    user: principal.user,
    anyDocument: principal.admin || principal.channel === 'none',
  }
}

/** `text/html` (UTF-8) or JSON `{"html": "…"}`, under the byte cap. */
async function articleOf(
  request: Request,
  maxBytes: number,
  timeouts: BodyTimeouts,
): Promise<string> {
  assertIdentityEncoding(request)
  const type = mediaType(request.headers.get('content-type'))
  if (type === null) throw new UeError('UE_MEDIA_TYPE_UNSUPPORTED')
  const declared = Number(request.headers.get('content-length') ?? Number.NaN)
  if (declared > maxBytes) throw new UeError('UE_BODY_TOO_LARGE')
  const bytes = await readBodyBytes(request, maxBytes, timeouts)
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes)
  } catch {
    throw new UeError('UE_BODY_INVALID', { detail: 'the body is not UTF-8' })
  }
  if (type === 'html') return text
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new UeError('UE_BODY_INVALID', { detail: 'not valid JSON' })
  }
  const html = (value as { html?: unknown } | null)?.html
  if (typeof value !== 'object' || Array.isArray(value) || typeof html !== 'string')
    throw new UeError('UE_VALIDATION_FAILED', { detail: 'the body must be {"html": "<string>"}' })
  return html
}

/** `html` or `json` when the type is one of those in UTF-8 (or without a charset), else null. */
function mediaType(header: string | null): 'html' | 'json' | null {
  if (header === null) return null
  const [essence = '', ...params] = header.split(';').map((p) => p.trim().toLowerCase())
  const utf8 = params.every((p) => !p.startsWith('charset=') || /^charset="?utf-8"?$/.test(p))
  if (!utf8) return null
  if (essence === 'text/html') return 'html'
  if (essence === 'application/json') return 'json'
  return null
}
