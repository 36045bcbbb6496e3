import { type UploadResult, uploadResult } from '../../admission/results.js'
import type { UploadRule } from '../../admission/rules.js'
import { storeTempFile, vetHead } from '../../admission/store.js'
import { claimedExtension } from '../../ingest/display-name.js'
import { readSingleFile } from '../../ingest/multipart.js'
import type { ContentType } from '../../ingest/sniff.js'
import { createSpool } from '../../ingest/temp-file.js'
import type { ActionContext } from '../deps.js'

/** image, snapscreen, video, audio and file: one streamed multipart file part. */
export async function handleUpload(ctx: ActionContext, rule: UploadRule): Promise<UploadResult> {
  const { config } = ctx.deps
  const spool = createSpool(config.uploads.tempDir, ctx.deps.metrics)
  let vetted: ContentType | undefined
  try {
    const file = await readSingleFile(ctx.request, spool, {
      fieldNames: rule.fieldNames,
      maxSize: rule.maxSize,
      maxFields: config.uploads.maxFields,
      timeouts: config.http,
      // A type that cannot pass is refused on the first bytes, not after the whole body.
      inspect: async (head, name) => {
        vetted = await vetHead(ctx.deps, rule, head, claimedExtension(name))
      },
    })
    const entry = await storeTempFile(
      ctx.deps,
      file,
      rule,
      claimedExtension(file.originalName),
      ctx.actor,
      vetted,
    )
    return uploadResult(config.publicUrl, entry)
  } finally {
    await spool.dispose()
  }
}
