import { claimedExtension } from '../../ingest/display-name.js'
import { readSingleFile } from '../../ingest/multipart.js'
import { createSpool } from '../../ingest/temp-file.js'
import type { UploadRule } from '../action-table.js'
import type { ActionContext } from '../deps.js'
import { type UploadResult, uploadResult } from '../results.js'
import { storeTempFile } from '../store.js'

/** image, snapscreen, video, audio and file: one streamed multipart file part. */
export async function handleUpload(ctx: ActionContext, rule: UploadRule): Promise<UploadResult> {
  const { config } = ctx.deps
  const spool = await createSpool(config.uploads.tempDir)
  try {
    const file = await readSingleFile(ctx.request, spool, {
      fieldNames: rule.fieldNames,
      maxSize: rule.maxSize,
      maxFields: config.uploads.maxFields,
      timeouts: config.http,
    })
    const entry = await storeTempFile(
      ctx.deps,
      file,
      rule,
      claimedExtension(file.originalName),
      ctx.actor,
    )
    return uploadResult(config.publicUrl, entry)
  } finally {
    await spool.dispose()
  }
}
