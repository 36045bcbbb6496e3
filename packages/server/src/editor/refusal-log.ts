import type { ServerConfig } from '../config/load.js'
import type { UeError } from '../shared/errors.js'
import type { ActionDef } from './action-table.js'

/**
 * What a debug log line says about a refused editor request, so an integrator can see why
 * without reading the code: the action and its kind, the form field the action reads, and the
 * limit the request hit (with the configured value).
 */
export function refusalDetails(
  def: ActionDef | undefined,
  error: UeError,
  config: ServerConfig,
): Record<string, unknown> {
  const out: Record<string, unknown> = { code: error.code, action: def?.name ?? null }
  if (error.detail) out.detail = error.detail
  if (!def) return out
  out.kind = def.kind
  if (!('rule' in def)) return out
  if (def.kind !== 'list') out.field = def.rule.fieldNames[0]
  const limit = limitFor(def, error, config)
  if (limit) out.limit = limit
  return out
}

function limitFor(
  def: Extract<ActionDef, { rule: unknown }>,
  error: UeError,
  config: ServerConfig,
): Record<string, unknown> | undefined {
  const rule = def.rule
  switch (error.code) {
    case 'UE_FILE_TOO_LARGE':
    case 'UE_BODY_TOO_LARGE':
      return 'maxSize' in rule ? { maxSize: rule.maxSize } : undefined
    case 'UE_TYPE_NOT_ALLOWED':
    case 'UE_CONTENT_MISMATCH':
    case 'UE_REMOTE_NOT_IMAGE':
      return { allowFiles: rule.allowFiles }
    case 'UE_FILE_MISSING':
      return 'fieldNames' in rule ? { fieldNames: rule.fieldNames } : undefined
    case 'UE_TOO_MANY_FILES':
      return { files: 1 }
    case 'UE_IMAGE_TOO_LARGE':
      return { maxPixels: config.images.maxPixels, maxFrames: config.images.maxFrames }
    case 'UE_RATE_LIMITED':
      return {
        uploadsPerMinute: config.limits.uploadsPerMinute,
        concurrentUploads: config.limits.concurrentUploads,
        uploadQueue: config.limits.uploadQueue,
        uploadQueueWaitMs: config.limits.uploadQueueWaitMs,
      }
    case 'UE_STORAGE_FULL':
      // The floor's refusal; a write that ran out of space says where instead (its context).
      return error.context ? undefined : { minFreeBytes: config.limits.minFreeBytes }
    case 'UE_REMOTE_TOO_MANY':
      return { maxSources: config.catcher.maxSources }
    default:
      return undefined
  }
}
