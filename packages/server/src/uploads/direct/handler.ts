import { type Admission, unknownCategory } from '../../admission/admit.js'
import { uploadClientKey } from '../../admission/gate.js'
import { ruleOf, type UploadRules } from '../../admission/rules.js'
import type { Authenticator } from '../../auth/authenticator.js'
import { isCrossSite } from '../../auth/cross-site.js'
import type { Actor } from '../../auth/types.js'
import type { ServerConfig } from '../../config/load.js'
import type { UploadCategory } from '../../db/upload-ledger.js'
import { claimedExtension } from '../../ingest/display-name.js'
import { UeError } from '../../shared/errors.js'
import { readJsonObject } from '../../shared/json-body.js'
import { isPlainObject } from '../../shared/plain-object.js'
import { requestInfo } from '../../shared/request-info.js'
import { urlOf } from '../../shared/request-url.js'
import { jsonResponse } from '../../shared/respond.js'
import type { FetchHandler, StorageKey } from '../../shared/types.js'
import type { DirectBucket } from '../../storage/s3-direct.js'
import { pendingContentType } from '../pending-type.js'
import { directIdOfKey, newDirectId, pendingKeyOf, pendingRefOf } from './keys.js'
import type { DirectLedger, DirectRow } from './ledger.js'
import { type DirectCall, parseDirectPath } from './paths.js'

export interface DirectDeps {
  config: ServerConfig
  bucket: DirectBucket
  auth: Authenticator
  ledger: DirectLedger
  /** The upload rule of each category a direct upload may name. */
  rules: UploadRules
  /** The one admission of every upload (the same limits and codes as the editor's uploads). */
  admission: Admission
}

/**
 * What a direct upload declares before its first byte: Uppy's file name and meta. The type Uppy
 * sends is not read: the pending object's type is the server's (`pendingContentType`).
 */
interface Declared {
  filename: string
  metadata: Record<string, unknown>
}

const MAX_JSON_BYTES = 1024 * 1024

/**
 * The signing routes `@uppy/aws-s3` 6 calls with `companionEndpoint` (docs/uploads.md): every
 * call is authenticated like an editor upload and may only touch an upload of its own caller;
 * keys are the server's (`.direct/<upload id>`), never the client's.
 */
export function createDirectHandler(deps: DirectDeps, basePath: string): FetchHandler {
  const { config } = deps
  const corsOrigins = new Set(config.http.corsOrigins)
  const prefix = `${basePath.replace(/\/+$/, '')}/`
  const expires = config.direct.signedUrlSeconds

  return async (request) => {
    const url = urlOf(request)
    const { call, pathToken } = parseDirectPath(url.pathname.slice(prefix.length), request.method)
    const actor = await authenticate(deps, request, url, pathToken)
    // A cookie rides along on another site's requests: none of these may act on it.
    if (actor.channel === 'hook' && isCrossSite(request, url, corsOrigins))
      throw new UeError('UE_CROSS_SITE')
    switch (call.op) {
      case 'params':
        return jsonResponse(await simpleParams(deps, actor, declaredFromQuery(url), expires))
      case 'create':
        return jsonResponse(
          await createMultipart(deps, actor, await declaredFromBody(request, config)),
        )
      default:
        return jsonResponse(await onUpload(deps, actor, call, url, request, expires))
    }
  }
}

async function authenticate(
  deps: DirectDeps,
  request: Request,
  url: URL,
  pathToken: { name: string; value: string } | undefined,
): Promise<Actor> {
  let seen = url
  if (pathToken) {
    if (pathToken.name !== deps.config.auth.queryParam) throw new UeError('UE_NOT_FOUND')
    seen = new URL(url)
    seen.searchParams.set(pathToken.name, pathToken.value)
  }
  const principal = await deps.auth.authenticate(request, seen)
  return { ...principal, address: requestInfo(request)?.remoteAddress }
}

/** A simple upload: one signed POST of exactly this key, type and size range. */
async function simpleParams(deps: DirectDeps, actor: Actor, d: Declared, expires: number) {
  const { contentType, open } = declaredUpload(deps, d)
  const row = await open(actor, (id) => pendingRefOf(pendingKeyOf(id)))
  try {
    const signed = await deps.bucket.signPost(row.key, {
      contentType,
      maxBytes: row.row.size,
      expiresSeconds: expires,
    })
    return { method: 'POST', url: signed.url, fields: signed.fields, headers: {}, id: row.id }
  } catch (e) {
    await deps.ledger.discard(row)
    throw e
  }
}

/**
 * A multipart upload: started in the bucket once admission's limits have passed, so its row
 * records the one upload id its parts may be signed for; a row that cannot be recorded (the
 * quota) aborts it again.
 */
async function createMultipart(deps: DirectDeps, actor: Actor, d: Declared) {
  const { contentType, open } = declaredUpload(deps, d)
  let started: { key: StorageKey; uploadId: string } | undefined
  try {
    const row = await open(actor, (id) => async () => {
      const key = pendingKeyOf(id)
      started = { key, uploadId: await deps.bucket.createMultipart(key, contentType) }
      return pendingRefOf(key, started.uploadId)
    })
    return { key: row.key, uploadId: started?.uploadId, id: row.id }
  } catch (e) {
    // If this abort fails too, the sweep aborts the upload no row owns after the expiry.
    if (started) await deps.bucket.abort(started.key, started.uploadId).catch(() => {})
    throw e
  }
}

/**
 * What a direct upload declares, for admission: its category's rule, its name and its size
 * (Uppy sends no size unless the page puts it in the meta: then the whole limit is reserved, and
 * the ending refuses a file larger than what was reserved). Answers the type its pending object
 * gets, and `open`, which admits it and records its row.
 */
function declaredUpload(deps: DirectDeps, d: Declared) {
  const category = d.metadata.category
  const rule = typeof category === 'string' ? deps.rules.get(category as UploadCategory) : undefined
  if (!rule) throw unknownCategory(deps.rules.keys())
  const contentType = pendingContentType(
    rule.category as UploadCategory,
    claimedExtension(d.filename),
  )
  const open = async (
    actor: Actor,
    storeRef: (id: string) => string | (() => Promise<string>),
  ): Promise<DirectRow> => {
    const id = newDirectId()
    const ticket = await deps.admission.admit(actor, {
      rule,
      name: d.filename,
      size: declaredSize(d.metadata.size),
      reserve: { via: 'direct', id, storeRef: storeRef(id), bytes: 'elsewhere' },
    })
    ticket.end()
    if (!ticket.row) throw new UeError('UE_INTERNAL', { detail: 'admitted without its row' })
    return deps.ledger.rowOf(ticket.row)
  }
  return { contentType, open }
}

/** `metadata.size` as a number for admission to check; absent when not declared. */
function declaredSize(value: unknown): number | undefined {
  if (value === undefined || value === null || value === '') return undefined
  return typeof value === 'number' || typeof value === 'string' ? Number(value) : Number.NaN
}

function declaredFromQuery(url: URL): Declared {
  const metadata: Record<string, unknown> = {}
  for (const [name, value] of url.searchParams) {
    const m = /^metadata\[([A-Za-z0-9_.-]{1,64})\]$/.exec(name)
    if (m) metadata[m[1] as string] = value
  }
  return declared(url.searchParams.get('filename'), metadata)
}

async function declaredFromBody(request: Request, config: ServerConfig): Promise<Declared> {
  const body = await readJson(request, config)
  const metadata = isPlainObject(body.metadata) ? body.metadata : {}
  return declared(body.filename, metadata)
}

function declared(filename: unknown, metadata: Record<string, unknown>): Declared {
  if (typeof filename !== 'string' || filename.length === 0 || filename.length > 1024)
    throw new UeError('UE_VALIDATION_FAILED', { detail: 'filename' })
  return { filename, metadata }
}

/** Sign a part, list the parts, complete or abort: only the caller's own upload. */
async function onUpload(
  deps: DirectDeps,
  actor: Actor,
  call: Exclude<DirectCall, { op: 'params' | 'create' }>,
  url: URL,
  request: Request,
  expires: number,
): Promise<unknown> {
  const row = await ownRow(deps, actor, url.searchParams.get('key'))
  // Only the multipart upload the server started for this row: a part signed for another
  // upload id (one of the same key the client got elsewhere) is never signed.
  if (row.uploadId === null || row.uploadId !== call.uploadId) throw new UeError('UE_NOT_FOUND')
  const key = row.key
  switch (call.op) {
    case 'sign': {
      const signed = await deps.bucket.signPart(key, call.uploadId, call.partNumber, expires)
      return { url: signed, expires }
    }
    case 'list':
      return await deps.bucket.listParts(key, call.uploadId)
    case 'abort':
      await deps.bucket.abort(key, call.uploadId)
      await deps.ledger.discard(row)
      return {}
    case 'complete':
      return await complete(deps, row, call.uploadId, await partsOf(request, deps.config))
  }
}

/**
 * The caller's own upload still receiving bytes, by the key Uppy sends back; anyone else's,
 * a finished one or an unknown one are the same UE_NOT_FOUND, so ids cannot be probed.
 */
async function ownRow(deps: DirectDeps, actor: Actor, key: string | null): Promise<DirectRow> {
  const id = key === null ? null : directIdOfKey(key)
  const row = id === null ? null : await deps.ledger.get(id)
  if (row?.state !== 'receiving' || !ownedBy(row, actor)) throw new UeError('UE_NOT_FOUND')
  return row
}

function ownedBy(row: DirectRow, actor: Actor): boolean {
  if (row.owner !== null) return row.owner === actor.user
  // Nobody signed in (auth mode none): the upload belongs to the client that opened it.
  return actor.user === null && row.client === (uploadClientKey(actor) ?? null)
}

async function complete(
  deps: DirectDeps,
  row: DirectRow,
  uploadId: string,
  parts: { PartNumber: number; ETag: string }[],
) {
  const rule = ruleOf(deps.rules, row.category)
  // What the bucket holds, not what the client says: a file over the limit is never assembled.
  const held = await deps.bucket.listParts(row.key, uploadId)
  const total = held.reduce((sum, p) => sum + p.Size, 0)
  if (total > rule.maxSize) {
    await deps.bucket.abort(row.key, uploadId)
    await deps.ledger.refuse(row, new UeError('UE_FILE_TOO_LARGE'))
    throw new UeError('UE_FILE_TOO_LARGE')
  }
  await deps.bucket.complete(row.key, uploadId, parts)
  const result = await deps.ledger.finish(row)
  return { location: 'url' in result ? result.url : '', key: row.key, id: row.id, ...result }
}

async function partsOf(request: Request, config: ServerConfig) {
  const body = await readJson(request, config)
  const parts = body.parts
  if (!Array.isArray(parts) || parts.length === 0 || parts.length > 10_000)
    throw new UeError('UE_VALIDATION_FAILED', { detail: 'parts' })
  return parts.map((p: unknown) => {
    const n = isPlainObject(p) ? p.PartNumber : undefined
    const etag = isPlainObject(p) ? p.ETag : undefined
    if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > 10_000)
      throw new UeError('UE_VALIDATION_FAILED', { detail: 'parts[].PartNumber' })
    if (typeof etag !== 'string' || etag.length === 0 || etag.length > 256)
      throw new UeError('UE_VALIDATION_FAILED', { detail: 'parts[].ETag' })
    return { PartNumber: n as number, ETag: etag }
  })
}

/** A small JSON object (Uppy's create and complete calls), under a byte cap. */
function readJson(request: Request, config: ServerConfig): Promise<Record<string, unknown>> {
  return readJsonObject(request, { maxBytes: MAX_JSON_BYTES, timeouts: config.http })
}
