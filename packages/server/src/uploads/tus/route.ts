import { randomBytes } from 'node:crypto'
import { Server } from '@tus/server'
import { type Ticket, unknownCategory } from '../../admission/admit.js'
import { ruleOf } from '../../admission/rules.js'
import { isCrossSite } from '../../auth/cross-site.js'
import type { Actor } from '../../auth/types.js'
import type { UploadCategory, UploadRow } from '../../db/upload-ledger.js'
import { claimedExtension } from '../../ingest/display-name.js'
import { diskFullCode, isUeError, storageFull, UeError } from '../../shared/errors.js'
import { noMetrics } from '../../shared/metrics.js'
import { BodyWatch, readBody } from '../../shared/request-body.js'
import { requestInfo } from '../../shared/request-info.js'
import { urlOf } from '../../shared/request-url.js'
import { JSON_TYPE, safeJson } from '../../shared/respond.js'
import type { FetchHandler } from '../../shared/types.js'
import { claimAndFinish, type UploadDeps } from '../finish.js'
import { pendingContentType } from '../pending-type.js'
import { answerOf, answerOfRow } from '../result-action.js'
import { UPLOAD_ID } from './keys.js'
import type { TusPlace } from './stores.js'

const TUS_VERSION = '1.0.0'

export { TUS_EXPOSED_HEADERS, TUS_REQUEST_HEADERS } from './headers.js'

export interface TusRoute {
  handler: FetchHandler
}

/**
 * A request on its way through tus: the client's, its body under the server's deadlines, with
 * what the route knows of it. tus hands every hook the request it was given, so this is where
 * the hooks find who it is for and leave what they decided.
 */
class TusRequest extends Request {
  /** Who it is for; null for discovery (`OPTIONS`). */
  readonly actor: Actor | null
  /** The upload it continues (`HEAD`, `PATCH`, `DELETE`). */
  readonly row: UploadRow | undefined
  /** The server's deadlines on its body, when it has one. */
  readonly watch: BodyWatch | undefined
  /** Its admission: the creation's (with the upload's ledger row), or a `PATCH`'s upload slot. */
  ticket: Ticket | undefined
  /** The upload whose ending ran in this request: its bytes go once tus has answered. */
  ended: UploadRow | undefined
  /** What went wrong when tus answered with an error of its own. */
  failure: { error: unknown } | undefined

  constructor(
    url: string,
    init: RequestInit,
    o: { actor: Actor | null; row?: UploadRow | undefined; watch?: BodyWatch },
  ) {
    super(url, init)
    this.actor = o.actor
    this.row = o.row
    this.watch = o.watch
  }
}

/**
 * Resumable uploads (tus 1.0: core, creation, creation-with-upload, termination, expiration) at
 * `path`, through `@tus/server` and the store of the configured storage. The route decides who
 * a request is for (the same authenticator as every upload) and whose upload it is (owner only;
 * anyone else is told it does not exist); tus's hooks run the rest: the creation is admitted
 * (`onUploadCreate`: the category's size limit and extensions, the per-client limits, the
 * quota reservation) before its first byte, each `PATCH` takes an upload slot
 * (`onIncomingRequest`), and the last byte runs the one ending (`onUploadFinish`), whose answer
 * carries the upload result. The body reaches the store as a stream under the server's body
 * deadlines.
 */
export function createTusRoute(o: { deps: UploadDeps; place: TusPlace; path: string }): TusRoute {
  const { deps, place, path } = o
  const { config, admission, rules } = deps
  const metrics = deps.metrics ?? noMetrics
  const corsOrigins = new Set(config.http.corsOrigins)
  const largest = Math.max(...[...rules.values()].map((r) => r.maxSize))

  const tus = new Server({
    path,
    datastore: place.datastore,
    // A PATCH's limit is its upload's category's; a creation's is admission's (0: tus leaves it
    // to `onUploadCreate`, so that it is refused with the server's code); discovery announces
    // the largest.
    maxSize: (req) => {
      const r = req as TusRequest
      if (r.method === 'POST') return 0
      return r.row ? ruleOf(rules, r.row.category).maxSize : largest
    },
    // A relative Location works behind any proxy that keeps the path.
    generateUrl: (_req, { path: at, id }) => `${at}/${place.ledgerIdOf(id) ?? ''}`,
    // The path's last segment: tus would take it from the whole URL, a query token included.
    getFileIdFromRequest: (req) => {
      const last = new URL(req.url).pathname.split('/').pop() ?? ''
      return UPLOAD_ID.test(last) ? place.storeIdOf(last) : undefined
    },
    // The upload's id is its ledger row's.
    namingFunction: () => place.storeIdOf(randomBytes(16).toString('base64url')),
    onIncomingRequest: async (req) => {
      const r = req as TusRequest
      // A PATCH holds an upload slot while it runs, with no rate point: a client sending small
      // chunks is not refused halfway through a large file.
      if (r.method === 'PATCH')
        r.ticket = await admission.admit(r.actor as Actor, { signal: r.signal })
    },
    // The creation's admission, with the size and metadata tus has read, before its first byte.
    onUploadCreate: async (req, upload) => {
      const r = req as TusRequest
      const id = place.ledgerIdOf(upload.id)
      // tus takes a deferred length when the store can; here every upload declares its size,
      // so that its quota is reserved before its first byte.
      if (upload.size === undefined || id === null)
        throw new UeError('UE_REQUEST_INVALID', {
          detail: 'an upload must declare its Upload-Length; deferred uploads are not accepted',
        })
      const { contentType: _type, cacheControl: _cache, ...metadata } = upload.metadata ?? {}
      const rule = ruleOf(rules, categoryOf(metadata.category, metadata.filetype))
      // `filename` is what tus-js-client's examples send, `name` what Uppy sends.
      const name = metadata.filename ?? metadata.name ?? ''
      r.ticket = await admission.admit(r.actor as Actor, {
        rule,
        name,
        size: upload.size,
        reserve: { via: 'tus', id, storeRef: upload.id },
        signal: r.signal,
      })
      // The S3 store gives the assembled object the `contentType` (and `cacheControl`) of the
      // metadata: the server's type, never one the client put there (`text/html` in a public
      // bucket).
      const contentType = pendingContentType(
        rule.category as UploadCategory,
        claimedExtension(name),
      )
      return { metadata: { ...metadata, contentType } }
    },
    // CORS is the route's own (exact origins); tus would answer `*`.
    allowedOrigins: () => false,
    // tus answers a failure with its own text; the server's one error path answers it instead.
    onResponseError: (req, error) => {
      ;(req as TusRequest).failure = { error }
      return undefined
    },
    onUploadFinish: async (req, upload) => {
      const id = place.ledgerIdOf(upload.id)
      const row = id ? await deps.uploads.get(id) : null
      const creation = req.method === 'POST'
      const accepted = { status_code: creation ? 201 : 204 }
      if (!row) return accepted
      // tus reads the upload once more after this hook (a creation's `Upload-Expires`): its
      // bytes are removed once tus has answered.
      const outcome = await claimAndFinish(deps, row, place.finished(row.id), { keepBytes: true })
      if (!outcome) return accepted
      ;(req as TusRequest).ended = row
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
   * The request tus reads: the same, with its body under the server's deadlines (tus has none of
   * its own: a stalled body would hold the upload's lock).
   */
  const tusRequest = (request: Request, actor: Actor | null, row?: UploadRow): TusRequest => {
    const init = { method: request.method, headers: request.headers, signal: request.signal }
    if (!request.body) return new TusRequest(request.url, init, { actor, row })
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
    return new TusRequest(request.url, { ...init, body, duplex: 'half' } as RequestInit, {
      actor,
      row,
      watch,
    })
  }

  /**
   * tus's answer, except for a failure it would answer with a store's error text or as its own
   * "aborted": a body the server's deadlines ended is their refusal (`UE_BODY_TIMEOUT`), one of
   * the server's refusals is itself, a store out of space is `UE_STORAGE_FULL`, and any other
   * failure is `UE_STORAGE_FAILED` (its detail goes to the log only). A store's failure is
   * counted as a storage failure. What tus answers itself is a tus answer to a tus client.
   */
  const viaTus = async (r: TusRequest): Promise<Response> => {
    const answer = await tus.handleWeb(r)
    if (!r.failure) return answer
    const failure = r.failure.error
    if (r.watch?.signal.aborted) throw r.watch.signal.reason
    const full = isUeError(failure) ? failure.code === 'UE_STORAGE_FULL' : !!diskFullCode(failure)
    if (full || (!isUeError(failure) && !isProtocolAnswer(failure) && answer.status >= 500))
      metrics.dependencyFailed('storage', 'tus')
    if (isUeError(failure)) throw failure
    if (full) throw storageFull('tus', place.folder, failure)
    if (answer.status >= 500 && !isProtocolAnswer(failure))
      throw new UeError('UE_STORAGE_FAILED', { cause: failure })
    return answer
  }

  /** Through tus, and what the request held ends with it: its slot, its deadlines, its bytes. */
  const run = async (r: TusRequest): Promise<Response> => {
    try {
      return await viaTus(r)
    } finally {
      r.watch?.stop()
      r.ticket?.end()
      if (r.ended) await removeEnded(r.ended)
    }
  }

  const removeEnded = async (row: UploadRow) => {
    try {
      await place.remove(row)
    } catch (e) {
      // The expiry sweep tries again; the answer does not wait for it.
      deps.log.warn({ err: e, upload: row.id }, 'unfinished upload not removed')
    }
  }

  const create = async (request: Request, actor: Actor): Promise<Response> => {
    const r = tusRequest(request, actor)
    // Not created after all (refused, or its body broke off before the answer, so the client
    // never learnt its Location): its bytes and its reservation go.
    let answer: Response
    try {
      answer = await run(r)
    } catch (e) {
      if (r.ticket?.row && !r.ended) await forget(r.ticket.row)
      throw e
    }
    if (answer.status >= 300 && r.ticket?.row && !r.ended) await forget(r.ticket.row)
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
      return await run(tusRequest(request, actor, row))
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
    if (request.method === 'OPTIONS') return run(tusRequest(request, null))
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
        answer = await run(tusRequest(request, actor, row))
      } finally {
        await place.remove(row)
        await deps.uploads.remove(row.id)
      }
      // The store may have lost the bytes already; the upload is gone either way.
      return answer.status === 404
        ? new Response(null, { status: 204, headers: answer.headers })
        : answer
    }
    return run(tusRequest(request, actor, row))
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
    // tus always sets `Access-Control-Expose-Headers` (no option turns it off); CORS is the
    // route's, which adds its own for an allowed origin only.
    for (const name of [...answer.headers.keys()])
      if (name.startsWith('access-control-')) answer.headers.delete(name)
    return answer
  }
  return { handler }
}

/**
 * One of tus's own protocol answers (a plain `{status_code, body}` other than its "unknown
 * error"), such as 501 for the concatenation it does not offer: a tus client reads it as such.
 */
function isProtocolAnswer(failure: unknown): boolean {
  if (failure instanceof Error || typeof failure !== 'object' || failure === null) return false
  const status = (failure as { status_code?: unknown }).status_code
  return typeof status === 'number' && status !== 500
}

/** The category a creation asks for; without one, the kind of its declared type. */
function categoryOf(
  asked: string | null | undefined,
  type: string | null | undefined,
): UploadCategory {
  if (asked !== undefined && asked !== null) {
    if (asked === 'image' || asked === 'video' || asked === 'audio' || asked === 'file')
      return asked
    throw unknownCategory(['image', 'video', 'audio', 'file'])
  }
  const kind = type?.split('/')[0]
  return kind === 'image' || kind === 'video' || kind === 'audio' ? kind : 'file'
}
