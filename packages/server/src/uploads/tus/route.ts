import { randomBytes } from 'node:crypto'
import { type DataStore, Server, Upload } from '@tus/server'
import { isCrossSite } from '../../auth/cross-site.js'
import { UPLOAD_CATEGORIES, type UploadCategory, type UploadRow } from '../../db/upload-ledger.js'
import type { Actor } from '../../editor/deps.js'
import { type UploadGate, uploadClientKey } from '../../editor/limits.js'
import { checkQuota } from '../../editor/store.js'
import { claimedExtension } from '../../ingest/display-name.js'
import { diskFullCode, isUeError, storageFull, UeError } from '../../shared/errors.js'
import { noMetrics } from '../../shared/metrics.js'
import { BodyWatch, readBody } from '../../shared/request-body.js'
import { requestInfo } from '../../shared/request-info.js'
import { urlOf } from '../../shared/request-url.js'
import { JSON_TYPE, safeJson } from '../../shared/respond.js'
import type { FetchHandler } from '../../shared/types.js'
import { claimAndFinish, type UploadDeps, uploadRuleFor } from '../finish.js'
import { pendingContentType } from '../pending-type.js'
import { answerOf, answerOfRow } from '../result-action.js'
import { UPLOAD_ID } from './keys.js'
import { parseUploadMetadata } from './metadata.js'
import type { TusPlace } from './stores.js'

const TUS_VERSION = '1.0.0'

export { TUS_EXPOSED_HEADERS, TUS_REQUEST_HEADERS } from './headers.js'

export interface TusRoute {
  handler: FetchHandler
}

/**
 * Resumable uploads (tus 1.0: core, creation, creation-with-upload, termination, expiration) at
 * `path`, through `@tus/server` and the store of the configured storage. Everything the server
 * decides is decided here, before tus sees the request: who it is for (the same authenticator
 * as every upload), whose upload it is (owner only; anyone else is told it does not exist), and,
 * at creation, the category's size limit, its allowed extensions, the quota and the per-client
 * limits, so an upload that cannot pass is refused before its first byte. The body reaches the
 * store as a stream under the server's body deadlines. The last byte runs the one ending, and
 * its answer carries the upload result.
 */
export function createTusRoute(o: {
  deps: UploadDeps
  place: TusPlace
  gate: UploadGate
  path: string
}): TusRoute {
  const { deps, place, gate, path } = o
  const { config } = deps
  const metrics = deps.metrics ?? noMetrics
  const corsOrigins = new Set(config.http.corsOrigins)
  /**
   * What the route decided of each creation request, for tus's hooks: its ledger id and the
   * type its object gets in a bucket.
   */
  const assigned = new WeakMap<Request, { id: string; contentType: string }>()
  /** What went wrong in a request tus answered with an error, for `viaTus` to answer it. */
  const failures = new WeakMap<Request, unknown>()
  /** Uploads whose ending ran inside a request that is still being answered, by store id. */
  const ended = new Map<string, Upload>()
  const endedBy = new WeakMap<object, string>()

  const tus = new Server({
    path,
    datastore: settledAware(place.datastore, ended),
    maxSize: Math.max(...UPLOAD_CATEGORIES.map((c) => uploadRuleFor(deps.table, c).maxSize)),
    // A relative Location works behind any proxy that keeps the path.
    generateUrl: (_req, { path: at, id }) => `${at}/${place.ledgerIdOf(id) ?? ''}`,
    // The path's last segment: tus would take it from the whole URL, a query token included.
    getFileIdFromRequest: (req) => {
      const last = new URL(req.url).pathname.split('/').pop() ?? ''
      return UPLOAD_ID.test(last) ? place.storeIdOf(last) : undefined
    },
    namingFunction: (req) => {
      const id = assigned.get(req as Request)?.id
      if (!id) throw new UeError('UE_INTERNAL', { detail: 'tus creation without a ledger row' })
      return place.storeIdOf(id)
    },
    // The S3 store gives the assembled object the `contentType` (and `cacheControl`) of the
    // metadata: the server's type, never one the client put there (`text/html` in a public bucket).
    onUploadCreate: async (req, upload) => {
      const { contentType: _type, cacheControl: _cache, ...metadata } = upload.metadata ?? {}
      const decided = assigned.get(req as Request)
      if (!decided)
        throw new UeError('UE_INTERNAL', { detail: 'tus creation without a ledger row' })
      return { metadata: { ...metadata, contentType: decided.contentType } }
    },
    // CORS is the route's own (exact origins); tus would answer `*`.
    allowedOrigins: () => false,
    // Kept for `viaTus`: tus would answer a store's failure with the store's own error text.
    onResponseError: (req, err) => {
      failures.set(req as Request, err)
      return undefined
    },
    onUploadFinish: async (req, upload) => {
      const id = place.ledgerIdOf(upload.id)
      const row = id ? await deps.uploads.get(id) : null
      const creation = req.method === 'POST'
      const accepted = { status_code: creation ? 201 : 204 }
      if (!row) return accepted
      const outcome = await claimAndFinish(deps, row, place.finished(row.id))
      ended.set(upload.id, upload)
      endedBy.set(req, upload.id)
      if (!outcome) return accepted
      if ('state' in outcome) metrics.stored('tus', outcome.size)
      return {
        // A creation keeps 201, whose Location the client needs.
        status_code: creation ? 201 : 200,
        headers: { 'Content-Type': JSON_TYPE, 'Cache-Control': 'no-store' },
        body: safeJson(answerOf(outcome, config.locale)),
      }
    },
  })

  /**
   * tus's answer, except for a failure it would answer with a store's error text or as its own
   * "aborted": a body the server's deadlines ended is their refusal (`UE_BODY_TIMEOUT`), one of
   * the server's refusals is itself, a store out of space is `UE_STORAGE_FULL`, and any other
   * failure is `UE_STORAGE_FAILED` (its detail goes to the log only). A store's failure is
   * counted as a storage failure.
   */
  const viaTus = async (request: Request, watch?: BodyWatch): Promise<Response> => {
    const answer = await tus.handleWeb(request)
    if (!failures.has(request)) return answer
    const failure = failures.get(request)
    if (watch?.signal.aborted) throw watch.signal.reason
    const full = isUeError(failure) ? failure.code === 'UE_STORAGE_FULL' : !!diskFullCode(failure)
    if (full || (!isUeError(failure) && answer.status >= 500))
      metrics.dependencyFailed('storage', 'tus')
    if (isUeError(failure)) throw failure
    if (full) throw storageFull('tus', place.folder, failure)
    if (answer.status >= 500) throw new UeError('UE_STORAGE_FAILED', { cause: failure })
    return answer
  }

  /** The request tus reads: the same, with its body under the server's deadlines. */
  const watched = (request: Request): { request: Request; watch?: BodyWatch; stop(): void } => {
    if (!request.body) return { request, stop() {} }
    const watch = new BodyWatch(config.http, request.signal)
    const chunks = readBody(request, { maxBytes: Number.MAX_SAFE_INTEGER, watch })
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await chunks.next()
        if (next.done) controller.close()
        else controller.enqueue(next.value)
      },
      async cancel() {
        await chunks.return(undefined)
      },
    })
    const init = { method: request.method, headers: request.headers, body, duplex: 'half' }
    const tusRequest = new Request(request.url, init as RequestInit)
    return { request: tusRequest, watch, stop: () => watch.stop() }
  }

  /** Through tus, counted as an upload in flight, under the per-client limits. */
  const receive = async (
    request: Request,
    actor: Actor,
    creation?: { id: string; contentType: string },
  ): Promise<Response> => {
    // The creation counts against the per-minute rate; each PATCH holds an in-flight slot only,
    // so a client sending small chunks is not refused halfway through a large file.
    const release = await gate.admit(actor, request.signal, { rate: creation !== undefined })
    const uploadEnded = metrics.uploadStarted()
    const tusRequest = watched(request)
    if (creation) assigned.set(tusRequest.request, creation)
    try {
      return await viaTus(tusRequest.request, tusRequest.watch)
    } finally {
      const storeId = endedBy.get(tusRequest.request)
      if (storeId) ended.delete(storeId)
      tusRequest.stop()
      uploadEnded()
      release()
    }
  }

  const create = async (request: Request, actor: Actor): Promise<Response> => {
    const h = request.headers
    if (h.get('upload-defer-length') !== null || h.get('upload-concat') !== null)
      throw new UeError('UE_REQUEST_INVALID', {
        detail:
          'an upload must declare its Upload-Length; deferred and concatenated uploads are not accepted',
      })
    const length = h.get('upload-length') ?? ''
    if (!/^\d{1,15}$/.test(length))
      throw new UeError('UE_REQUEST_INVALID', { detail: 'Upload-Length must be a whole number' })
    const size = Number(length)
    const metadata = parseUploadMetadata(h.get('upload-metadata'))
    // `filename` is what tus-js-client's examples send, `name` what Uppy sends.
    const filename = metadata.get('filename') ?? metadata.get('name') ?? ''
    const category = categoryOf(metadata.get('category'), metadata.get('filetype'))
    const rule = uploadRuleFor(deps.table, category)
    if (size === 0) throw new UeError('UE_FILE_EMPTY')
    if (size > rule.maxSize) throw new UeError('UE_FILE_TOO_LARGE')
    const ext = claimedExtension(filename)
    if (!rule.allowFiles.includes(ext)) throw new UeError('UE_TYPE_NOT_ALLOWED')
    await checkQuota(deps, actor, size)
    const id = randomBytes(16).toString('base64url')
    const now = Date.now()
    const row = await deps.uploads.create({
      id,
      via: 'tus',
      owner: actor.user,
      client: uploadClientKey(actor) ?? null,
      category,
      originalName: filename,
      size,
      storeRef: place.storeIdOf(id),
      createdAt: now,
      expiresAt: now + config.uploads.expiryMs,
    })
    // Not created after all (refused, or its body broke off before the answer, so the client
    // never learnt its Location): its bytes and its reservation go.
    let answer: Response
    try {
      // Again with the row in: two creations at once on two nodes cannot both pass.
      await checkQuota(deps, actor, 0)
      answer = await receive(request, actor, { id, contentType: pendingContentType(category, ext) })
    } catch (e) {
      await forget(row)
      throw e
    }
    if (answer.status >= 300) await forget(row)
    return answer
  }

  /** Removes an upload that will not go on: its bytes (claimed first: no ending runs), its row. */
  const forget = async (row: UploadRow) => {
    if (await deps.uploads.claim(row.id)) await place.remove(row)
    await deps.uploads.remove(row.id)
  }

  /**
   * A PATCH. When its bytes run out of space the upload ends here, bytes and row: what it holds
   * cannot grow, and keeping it would keep the volume full (the client is told `UE_STORAGE_FULL`
   * and starts again). Refused by the free-space floor before a byte is read, it is kept.
   */
  const patch = async (request: Request, actor: Actor, row: UploadRow): Promise<Response> => {
    try {
      return await receive(request, actor)
    } catch (e) {
      if (isUeError(e) && e.code === 'UE_STORAGE_FULL' && diskFullCode(e)) await forget(row)
      throw e
    }
  }

  /** HEAD, PATCH and DELETE of an upload that is no longer receiving: its bytes have moved on. */
  const settled = (request: Request, row: UploadRow): Response => {
    const headers = new Headers({
      'Tus-Resumable': TUS_VERSION,
      'Cache-Control': 'no-store',
      'Upload-Offset': String(row.size),
      'Upload-Length': String(row.size),
    })
    if (request.method === 'DELETE') throw new UeError('UE_CONFLICT', { detail: 'finished' })
    if (request.method === 'HEAD' || !row.result)
      return new Response(null, { status: 204, headers })
    headers.set('Content-Type', JSON_TYPE)
    return new Response(safeJson(answerOfRow(row, config.locale)), { status: 200, headers })
  }

  const handle = async (request: Request): Promise<Response> => {
    // Discovery (a preflight never gets here: the route's CORS answers it).
    if (request.method === 'OPTIONS') return viaTus(request)
    const url = urlOf(request)
    const principal = await deps.auth.authenticate(request, url)
    const actor: Actor = { ...principal, address: requestInfo(request)?.remoteAddress }
    // A cookie rides along on another site's requests too.
    if (
      principal.channel === 'hook' &&
      request.method !== 'HEAD' &&
      isCrossSite(request, url, corsOrigins)
    )
      throw new UeError('UE_CROSS_SITE')
    const tail = url.pathname.slice(path.length)
    if (request.method === 'POST') {
      if (tail !== '' && tail !== '/') throw new UeError('UE_NOT_FOUND')
      return create(request, actor)
    }
    const id = /^\/([^/]+)$/.exec(tail)?.[1] ?? ''
    const row = UPLOAD_ID.test(id) ? await deps.uploads.get(id) : null
    // Someone else's upload is answered as one that does not exist.
    if (row?.via !== 'tus' || row.owner !== actor.user) throw new UeError('UE_NOT_FOUND')
    if (row.state !== 'receiving') return settled(request, row)
    if (request.method === 'PATCH') return patch(request, actor, row)
    if (request.method === 'DELETE') {
      // Claimed first, so no ending can start on bytes about to go.
      if (!(await deps.uploads.claim(row.id))) throw new UeError('UE_CONFLICT')
      let answer: Response
      try {
        answer = await viaTus(request)
      } finally {
        await place.remove(row)
        await deps.uploads.remove(row.id)
      }
      return answer.status === 404
        ? new Response(null, { status: 204, headers: answer.headers })
        : answer
    }
    return viaTus(request)
  }

  const handler: FetchHandler = async (request) => {
    let answer: Response
    try {
      answer = await handle(request)
    } catch (e) {
      // Refusals carry the protocol's header too, so a tus client reads them as tus answers.
      if (!isUeError(e)) throw e
      throw new UeError(e.code, {
        ...(e.detail ? { detail: e.detail } : {}),
        ...(e.context ? { context: { ...e.context } } : {}),
        cause: e,
        headers: { ...e.headers, 'Tus-Resumable': TUS_VERSION },
      })
    }
    const headers = new Headers(answer.headers)
    for (const name of [...headers.keys()])
      if (name.startsWith('access-control-')) headers.delete(name)
    return new Response(answer.body, { status: answer.status, headers })
  }
  return { handler }
}

/** The category a creation asks for; without one, the kind of its declared type. */
function categoryOf(asked: string | undefined, type: string | undefined): UploadCategory {
  if (asked !== undefined) {
    if ((UPLOAD_CATEGORIES as readonly string[]).includes(asked)) return asked as UploadCategory
    throw new UeError('UE_REQUEST_INVALID', {
      detail: 'category must be image, video, audio or file',
    })
  }
  const kind = type?.split('/')[0]
  return kind === 'image' || kind === 'video' || kind === 'audio' ? kind : 'file'
}

/**
 * The ending removes an upload's bytes before tus has answered the request that finished it, and
 * tus reads the upload once more to decide on `Upload-Expires`: it is answered as complete.
 */
function settledAware(store: DataStore, ended: ReadonlyMap<string, Upload>): DataStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'getUpload')
        return async (id: string) => {
          const upload = ended.get(id)
          if (upload) return new Upload({ ...upload, offset: upload.size ?? upload.offset })
          return target.getUpload(id)
        }
      const value = Reflect.get(target, prop, receiver) as unknown
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}
