import { createReadStream } from 'node:fs'
import { dirname } from 'node:path'
import type { Actor } from '../auth/types.js'
import { metafilesAvailable, type ServerConfig } from '../config/load.js'
import type { FileEntry, FileIndex } from '../db/types.js'
import type { UploadLedger } from '../db/upload-ledger.js'
import { type FileEventDeps, indexAnnounced, removeAnnounced } from '../events/file-events.js'
import type { Events } from '../events/publisher.js'
import type { ImagePolicy, ImageProcessor } from '../images/processor.js'
import { cleanOriginalName } from '../ingest/display-name.js'
import { renderKey } from '../ingest/keys.js'
import { type ContentType, decideContentType } from '../ingest/sniff.js'
import type { SpooledFile } from '../ingest/temp-file.js'
import { diskFullCode, storageFull, UeError } from '../shared/errors.js'
import { METAFILE_EXTS } from '../shared/metafile-header.js'
import type { Category, Logger, StorageKey } from '../shared/types.js'
import type { StorageDriver } from '../storage/driver.js'
import { uploadClientKey } from './gate.js'
import { checkQuota } from './quota.js'
import { IMAGE_CATEGORIES, type UploadRule } from './rules.js'

/** What storing an admitted file uses. */
export interface StoreDeps {
  config: ServerConfig
  storage: StorageDriver
  files: FileIndex
  events: Events
  uploads: Pick<UploadLedger, 'reserved'>
  images: ImageProcessor
  log: Logger
}

const KEY_ATTEMPTS = 3

/** The type an upload's first bytes must agree with; refuses as `decideContentType` does. */
export function vetHead(deps: StoreDeps, rule: UploadRule, head: Uint8Array, claimedExt: string) {
  if (
    METAFILE_EXTS.includes(claimedExt) &&
    !rule.allowFiles.includes(claimedExt) &&
    IMAGE_CATEGORIES.includes(rule.category) &&
    !metafilesAvailable(deps.config.images)
  )
    return Promise.reject(new UeError('UE_CONVERTER_UNAVAILABLE'))
  return decideContentType(head, claimedExt, rule.allowFiles, {
    allowActiveContent: deps.config.security.allowActiveContent,
  })
}

/**
 * Spooled file → sniffed type → image re-encoding → server key → storage → index. Whatever
 * fails, nothing stays half-done: an object whose index row cannot be written is deleted again.
 */
export async function storeTempFile(
  deps: StoreDeps,
  file: SpooledFile,
  rule: UploadRule,
  claimedExt: string,
  actor: Actor,
  /** The type `vetHead` already gave these first bytes while they arrived. */
  vetted?: ContentType,
  /** The ledger row these bytes settle: its reservation is exchanged for them. */
  reservation?: string,
): Promise<FileEntry> {
  const sniffed = vetted ?? (await vetHead(deps, rule, file.head, claimedExt))
  const processed = deps.images.handles(sniffed.ext)
    ? await deps.images.process(file, sniffed, imagePolicy(deps, rule.category, actor))
    : { file, ...sniffed }
  try {
    const place = placeFile(deps, processed.file.path)
    const stored = { size: processed.file.size, originalName: processed.file.originalName }
    return await storeBytes(deps, place, stored, rule, processed, actor, reservation)
  } finally {
    if (processed.file !== file) await processed.file.dispose()
  }
}

/** Writes the bytes to store under a key chosen by the caller's `storeBytes`. */
export type Placer = (key: StorageKey, meta: { size: number; contentType: string }) => Promise<void>

/** Places a finished local file (linked into place on disk). */
export function placeFile(deps: StoreDeps, path: string): Placer {
  return async (key, meta) => {
    const { storage } = deps
    if (storage.putFile) await storage.putFile(key, path, meta)
    else await storage.put(key, createReadStream(path), meta)
  }
}

/**
 * Bytes that passed their checks → quota → server key → storage → index, audited. `place`
 * writes them under the key (a local file, or a server-side copy of an object in the store).
 * The quota's settle: bytes without a reservation are counted before the write (no wasted
 * write) and again once their index row exists; bytes that settle a `reservation` (counted at
 * admission) only once their row exists, in its place.
 */
export async function storeBytes(
  deps: StoreDeps,
  place: Placer,
  file: { size: number; originalName: string },
  rule: UploadRule,
  type: { ext: string; mime: string },
  actor: Actor,
  reservation?: string,
): Promise<FileEntry> {
  if (reservation === undefined) await checkQuota(deps, actor.user, file.size)
  const key = await putUnderFreshKey(place, rule.pathFormat, type.ext, {
    size: file.size,
    contentType: type.mime,
  })
  let entry: FileEntry
  let indexed = false
  try {
    entry = await indexAnnounced(announcing(deps), {
      key,
      category: rule.category,
      originalName: cleanOriginalName(file.originalName, `${rule.category}${type.ext}`),
      ext: type.ext,
      size: file.size,
      mime: type.mime,
      // No digest is taken: nothing reads it, and hashing cost a quarter of a large upload's CPU.
      sha256: '',
      owner: actor.user,
    })
    indexed = true
    await checkQuota(deps, actor.user, 0, reservation)
  } catch (cause) {
    // Its fileStored event went out with the row: the undo is announced too.
    if (indexed) await removeAnnounced(announcing(deps), key, 'quota').catch(() => {})
    await deps.storage
      .delete(key)
      .catch((e: unknown) => deps.log.error({ err: e, key }, 'undo failed'))
    if (diskFullCode(cause)) throw storageFull('index', indexFolder(deps), cause)
    throw cause instanceof UeError ? cause : new UeError('UE_INDEX_FAILED', { cause })
  }
  deps.log.info(
    {
      audit: 'upload',
      user: actor.user,
      address: actor.address,
      category: entry.category,
      key: entry.key,
      size: entry.size,
    },
    'file stored',
  )
  return entry
}

/** The folder of a SQLite index, named in the log line of an index that ran out of space. */
function indexFolder(deps: StoreDeps): string | undefined {
  const { index } = deps.config
  return index.driver === 'sqlite' ? dirname(index.file) : undefined
}

/** Only the image categories are resized and watermarked; any stored image is re-encoded. */
function imagePolicy(deps: StoreDeps, category: Category, actor: Actor): ImagePolicy {
  const { imageCompressEnable, imageCompressBorder } = deps.config.editor
  const client = uploadClientKey(actor)
  if (!IMAGE_CATEGORIES.includes(category)) return { watermark: false, client }
  return imageCompressEnable
    ? { maxLongSide: imageCompressBorder, watermark: true, client }
    : { watermark: true, client }
}

function announcing(deps: StoreDeps): FileEventDeps {
  return { files: deps.files, events: deps.events, publicUrl: deps.config.publicUrl }
}

async function putUnderFreshKey(
  place: Placer,
  pathFormat: string,
  ext: string,
  meta: { size: number; contentType: string },
): Promise<StorageKey> {
  for (let attempt = 1; ; attempt++) {
    const key = renderKey(pathFormat, ext)
    try {
      await place(key, meta)
      return key
    } catch (cause) {
      const exists = cause instanceof UeError && cause.detail === 'exists'
      if (exists && attempt < KEY_ATTEMPTS) continue
      if (cause instanceof UeError) throw cause
      // A driver of the host's own may throw the system's error as it is.
      throw diskFullCode(cause)
        ? storageFull('store', undefined, cause)
        : new UeError('UE_STORAGE_FAILED', { cause })
    }
  }
}
