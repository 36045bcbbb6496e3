import { createReadStream } from 'node:fs'
import { open, stat, unlink } from 'node:fs/promises'
import type { Readable } from 'node:stream'
import { buffer } from 'node:stream/consumers'
import type { Admission } from '../admission/admit.js'
import { uploadResult } from '../admission/results.js'
import { ruleOf, type UploadRules } from '../admission/rules.js'
import {
  type Placer,
  placeFile,
  type StoreDeps,
  storeBytes,
  storeTempFile,
  vetHead,
} from '../admission/store.js'
import type { Authenticator } from '../auth/authenticator.js'
import type { Actor } from '../auth/types.js'
import type { FileEntry } from '../db/types.js'
import type { UploadLedger, UploadOutcome, UploadRow } from '../db/upload-ledger.js'
import { claimedExtension } from '../ingest/display-name.js'
import { createSpool, HEAD_BYTES } from '../ingest/temp-file.js'
import { refusalLevel, UeError } from '../shared/errors.js'
import { messageFor } from '../shared/messages.js'
import type { Metrics } from '../shared/metrics.js'
import type { FinishedBytes, UnfinishedUploads } from './unfinished.js'

/** What resumable and direct uploads use: the store pipeline, admission, and their own parts. */
export interface UploadDeps extends StoreDeps {
  uploads: UploadLedger
  auth: Authenticator
  admission: Admission
  /** The rule of each category an upload may name. */
  rules: UploadRules
  unfinished: UnfinishedUploads
  metrics?: Metrics | undefined
}

export interface EndingOptions {
  /** The caller removes the unfinished bytes itself, once it no longer reads them. */
  keepBytes?: boolean
}

/**
 * The one ending of a resumable or direct upload, on a row its caller claimed: the same ingest as
 * a multipart POST (size limit, allowed extension, magic bytes on the head, the image pipeline
 * for images, owner, quota, a server-chosen key, the index row), then the unfinished bytes are
 * removed and the row is settled with the result or the refusal. A refused file leaves nothing
 * in the store. Answers what the row was settled with.
 */
export async function finishUpload(
  deps: UploadDeps,
  row: UploadRow,
  bytes: FinishedBytes,
  o: EndingOptions = {},
): Promise<UploadOutcome> {
  let outcome: UploadOutcome
  try {
    const entry = await ingest(deps, row, bytes)
    outcome = uploadResult(deps.config.publicUrl, entry)
  } catch (e) {
    const error = e instanceof UeError ? e : new UeError('UE_INTERNAL', { cause: e })
    const level = refusalLevel(error)
    const context = { upload: row.id, ...error.context }
    if (level === 'error') deps.log.error({ err: e, ...context }, 'upload ending failed')
    else if (level === 'warn') deps.log.warn({ code: error.code, ...context }, 'upload refused')
    else deps.log.info({ code: error.code, detail: error.detail, ...context }, 'upload refused')
    outcome = { code: error.code, message: messageFor(deps.config.locale, error.code) }
  }
  if (!o.keepBytes) await removeUnfinished(deps, row, bytes)
  await deps.admission.settle(row.id, outcome)
  return outcome
}

/**
 * `finishUpload` for the caller that wins the claim (exactly one, across nodes); null for every
 * other caller, whose client then asks `?action=uploadresult`.
 */
export async function claimAndFinish(
  deps: UploadDeps,
  row: UploadRow,
  bytes: FinishedBytes,
  o: EndingOptions = {},
): Promise<UploadOutcome | null> {
  if (!(await deps.uploads.claim(row.id))) return null
  return finishUpload(deps, { ...row, state: 'processing' }, bytes, o)
}

async function ingest(deps: UploadDeps, row: UploadRow, bytes: FinishedBytes): Promise<FileEntry> {
  const rule = ruleOf(deps.rules, row.category)
  const size = await sizeOf(deps, bytes)
  if (size === 0) throw new UeError('UE_FILE_EMPTY')
  if (size > rule.maxSize || size > row.size) throw new UeError('UE_FILE_TOO_LARGE')
  const claimedExt = claimedExtension(row.originalName)
  const head = await headOf(deps, bytes, Math.min(size, HEAD_BYTES))
  const type = await vetHead(deps, rule, head, claimedExt)
  const actor: Actor = { user: row.owner, admin: false, channel: 'none' }
  if (deps.images.handles(type.ext)) {
    // Images are small: a copy in the temp spool, where the pipeline writes its output beside it.
    const spool = createSpool(deps.config.uploads.tempDir, deps.metrics)
    try {
      const file = await spool.write(await readAll(deps, bytes), rule.maxSize, row.originalName)
      return await storeTempFile(deps, file, rule, claimedExt, actor, type, row.id)
    } finally {
      await spool.dispose()
    }
  }
  const place: Placer =
    bytes.kind === 'file'
      ? placeFile(deps, bytes.path)
      : (key, meta) => deps.storage.copy(bytes.key, key, meta)
  return storeBytes(
    deps,
    place,
    { size, originalName: row.originalName },
    rule,
    type,
    actor,
    row.id,
  )
}

async function sizeOf(deps: UploadDeps, bytes: FinishedBytes): Promise<number> {
  if (bytes.kind === 'object') {
    const found = await deps.storage.stat(bytes.key)
    if (!found) throw new UeError('UE_FILE_MISSING')
    return found.size
  }
  try {
    return (await stat(bytes.path)).size
  } catch (cause) {
    throw new UeError('UE_FILE_MISSING', { cause })
  }
}

/** The first bytes: read from the file, or one ranged read of the object. */
async function headOf(deps: UploadDeps, bytes: FinishedBytes, length: number): Promise<Buffer> {
  if (bytes.kind === 'object') {
    const { body } = await deps.storage.get(bytes.key, { start: 0, end: length - 1 })
    return buffer(body)
  }
  const fh = await open(bytes.path, 'r')
  try {
    const head = Buffer.alloc(length)
    const { bytesRead } = await fh.read(head, 0, length, 0)
    return head.subarray(0, bytesRead)
  } finally {
    await fh.close()
  }
}

async function readAll(deps: UploadDeps, bytes: FinishedBytes): Promise<Readable> {
  return bytes.kind === 'file'
    ? createReadStream(bytes.path)
    : (await deps.storage.get(bytes.key)).body
}

/** The way's own removal (its parts and sidecars too); the bytes themselves when it has none. */
async function removeUnfinished(
  deps: UploadDeps,
  row: UploadRow,
  bytes: FinishedBytes,
): Promise<void> {
  try {
    const way = deps.unfinished.of(row.via)
    if (way) await way.remove(row)
    else if (bytes.kind === 'object') await deps.storage.delete(bytes.key)
    else await unlink(bytes.path).catch(() => {})
  } catch (e) {
    // The expiry sweep tries again; the answer does not wait for it.
    deps.log.warn({ err: e, upload: row.id }, 'unfinished upload not removed')
  }
}
