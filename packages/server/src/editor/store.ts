import { createReadStream } from 'node:fs'
import type { FileEntry } from '../db/types.js'
import type { ImagePolicy } from '../images/processor.js'
import { cleanOriginalName } from '../ingest/display-name.js'
import { renderKey } from '../ingest/keys.js'
import { decideContentType } from '../ingest/sniff.js'
import type { TempFile } from '../ingest/temp-file.js'
import { UeError } from '../shared/errors.js'
import type { Category, StorageKey } from '../shared/types.js'
import { IMAGE_CATEGORIES, type UploadRule } from './action-table.js'
import type { ActionContext, EditorDeps } from './deps.js'

const KEY_ATTEMPTS = 3

/**
 * TempFile → sniffed type → image re-encoding → server key → storage → index. Whatever fails,
 * nothing stays half-done: an object whose index row cannot be written is deleted again.
 */
export async function storeTempFile(
  ctx: ActionContext,
  file: TempFile,
  rule: UploadRule,
  claimedExt: string,
): Promise<FileEntry> {
  const { deps } = ctx
  const sniffed = await decideContentType(file.path, claimedExt, rule.allowFiles, {
    allowActiveContent: deps.config.security.allowActiveContent,
  })
  const processed = deps.images.handles(sniffed.ext)
    ? await deps.images.process(file, sniffed, imagePolicy(ctx, rule.category))
    : { file, ...sniffed }
  try {
    return await storeProcessed(deps, processed.file, rule, processed)
  } finally {
    if (processed.file !== file) await processed.file.dispose()
  }
}

/** Only the image categories are resized and watermarked; any stored image is re-encoded. */
function imagePolicy(ctx: ActionContext, category: Category): ImagePolicy {
  const { imageCompressEnable, imageCompressBorder } = ctx.deps.config.editor
  const { client } = ctx
  if (!IMAGE_CATEGORIES.includes(category)) return { watermark: false, client }
  return imageCompressEnable
    ? { maxLongSide: imageCompressBorder, watermark: true, client }
    : { watermark: true, client }
}

async function storeProcessed(
  deps: EditorDeps,
  file: TempFile,
  rule: UploadRule,
  type: { ext: string; mime: string },
): Promise<FileEntry> {
  const key = await putUnderFreshKey(deps, file, rule.pathFormat, type.ext, type.mime)
  try {
    return await deps.files.add({
      key,
      category: rule.category,
      originalName: cleanOriginalName(file.originalName, `${rule.category}${type.ext}`),
      ext: type.ext,
      size: file.size,
      mime: type.mime,
      sha256: file.sha256,
    })
  } catch (cause) {
    await deps.storage
      .delete(key)
      .catch((e: unknown) => deps.log.error({ err: e, key }, 'undo failed'))
    throw cause instanceof UeError ? cause : new UeError('UE_INDEX_FAILED', { cause })
  }
}

async function putUnderFreshKey(
  deps: EditorDeps,
  file: TempFile,
  pathFormat: string,
  ext: string,
  contentType: string,
): Promise<StorageKey> {
  for (let attempt = 1; ; attempt++) {
    const key = renderKey(pathFormat, ext)
    try {
      await deps.storage.put(key, createReadStream(file.path), { size: file.size, contentType })
      return key
    } catch (cause) {
      const exists = cause instanceof UeError && cause.detail === 'exists'
      if (exists && attempt < KEY_ATTEMPTS) continue
      throw cause instanceof UeError ? cause : new UeError('UE_STORAGE_FAILED', { cause })
    }
  }
}
