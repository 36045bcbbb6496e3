import type { Authenticator } from '../auth/authenticator.js'
import { isCrossSite } from '../auth/cross-site.js'
import { isUeError, UeError } from '../shared/errors.js'
import { readSmallBody } from '../shared/json-body.js'
import { isJsonMediaType, isUtf8, parseMediaType } from '../shared/media-type.js'
import { assertIdentityEncoding, type BodyTimeouts } from '../shared/request-body.js'
import { urlOf } from '../shared/request-url.js'
import { jsonResponse, SerialisedJson, safeJson } from '../shared/respond.js'
import type { FetchHandler } from '../shared/types.js'
import type { ArticleBody } from './clean.js'
import {
  type DocumentActor,
  type DocumentService,
  documentId,
  type SavedArticle,
} from './service.js'

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
        const body = await articleOf(request, o.maxBodyBytes, o.timeouts)
        return jsonResponse(savedJson(await o.service.save(id, body, actor)))
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

/**
 * `{html, files, foreign}`, from the parts the worker already wrote as JSON: the event loop
 * only joins them, however long the article.
 */
function savedJson(saved: SavedArticle): SerialisedJson {
  return SerialisedJson.fromText(
    `{"html":${saved.htmlJson},"files":${safeJson(saved.files)},"foreign":${saved.foreignJson}}`,
  )
}

/**
 * `text/html` or JSON `{"html": "…"}` (UTF-8 either way), under the byte cap, with the codes of
 * every JSON body (`shared/json-body.ts`). The bytes are decoded and parsed by the cleaning
 * worker, with the rest of the work on the article.
 */
async function articleOf(
  request: Request,
  maxBytes: number,
  timeouts: BodyTimeouts,
): Promise<ArticleBody> {
  assertIdentityEncoding(request)
  const type = parseMediaType(request.headers.get('content-type'))
  const json = type !== null && isJsonMediaType(type)
  if (type === null || !isUtf8(type) || (!json && type.essence !== 'text/html'))
    throw new UeError('UE_MEDIA_TYPE_UNSUPPORTED')
  return { bytes: await readSmallBody(request, maxBytes, timeouts), json }
}
