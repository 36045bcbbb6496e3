import { Readable } from 'node:stream'
import { type UploadResult, uploadResult } from '../../admission/results.js'
import type { UploadRule } from '../../admission/rules.js'
import { storeTempFile } from '../../admission/store.js'
import { formValues, readUrlEncodedForm } from '../../ingest/form.js'
import { readSingleFile } from '../../ingest/multipart.js'
import { createSpool } from '../../ingest/temp-file.js'
import { UeError } from '../../shared/errors.js'
import type { ActionContext } from '../deps.js'

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/**
 * Scrawl: the canvas PNG as url-encoded base64 in the configured field (no `data:` prefix,
 * though one is tolerated). A client that posts the drawing as a multipart file works too.
 * Either way the bytes must be a PNG.
 */
export async function handleBase64(ctx: ActionContext, rule: UploadRule): Promise<UploadResult> {
  const { config } = ctx.deps
  const spool = createSpool(config.uploads.tempDir, ctx.deps.metrics)
  try {
    const isMultipart = /^multipart\//i.test(ctx.request.headers.get('content-type') ?? '')
    const file = isMultipart
      ? await readSingleFile(ctx.request, spool, {
          fieldNames: rule.fieldNames,
          maxSize: rule.maxSize,
          maxFields: config.uploads.maxFields,
          timeouts: config.http,
        })
      : await spool.write(
          Readable.from([await readBase64Field(ctx, rule)]),
          rule.maxSize,
          'scrawl.png',
        )
    const entry = await storeTempFile(ctx.deps, file, rule, '.png', ctx.actor)
    return uploadResult(config.publicUrl, entry)
  } finally {
    await spool.dispose()
  }
}

async function readBase64Field(ctx: ActionContext, rule: UploadRule): Promise<Buffer> {
  const base64Length = Math.ceil(rule.maxSize / 3) * 4
  // encodeURIComponent turns '+', '/' and '=' into three bytes each; allow for a fair share.
  const maxBytes = Math.ceil(base64Length * 1.25) + 64 * 1024
  const form = await readUrlEncodedForm(ctx.request, {
    maxBytes,
    timeouts: ctx.deps.config.http,
  }).catch((e: unknown) => {
    throw e instanceof UeError && e.code === 'UE_BODY_TOO_LARGE'
      ? new UeError('UE_FILE_TOO_LARGE')
      : e
  })
  const value = rule.fieldNames.flatMap((name) => formValues(form, name))[0]
  if (value === undefined) throw new UeError('UE_FILE_MISSING')
  const data = value.replace(/^data:[\w/+.-]+;base64,/, '').replace(/\s+/g, '')
  if (data.length === 0) throw new UeError('UE_FILE_EMPTY')
  if (!BASE64.test(data)) throw new UeError('UE_BODY_INVALID', { detail: 'not base64' })
  if (Math.floor((data.length * 3) / 4) - (data.match(/=+$/)?.[0].length ?? 0) > rule.maxSize)
    throw new UeError('UE_FILE_TOO_LARGE')
  return Buffer.from(data, 'base64')
}
