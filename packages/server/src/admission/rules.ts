import type { UploadCategory } from '../db/upload-ledger.js'
import { UeError } from '../shared/errors.js'
import type { Category } from '../shared/types.js'

/** What the image categories store; only these are resized and watermarked. */
export const IMAGE_CATEGORIES: readonly Category[] = ['image', 'scrawl', 'snapscreen', 'catch']

/** The limits of one category of stored files: what a file of it may be, and where it goes. */
export interface UploadRule {
  category: Category
  /** Accepted multipart field names, the configured one first. */
  fieldNames: readonly string[]
  maxSize: number
  allowFiles: readonly string[]
  pathFormat: string
}

/** The rule of each category a resumable or direct upload may name (the editor's of that kind). */
export type UploadRules = ReadonlyMap<UploadCategory, UploadRule>

/** The rule of a category, or the refusal of one no upload action stores. */
export function ruleOf(rules: UploadRules, category: UploadCategory): UploadRule {
  const rule = rules.get(category)
  if (!rule)
    throw new UeError('UE_CONFIG_INVALID', { detail: `no upload action stores ${category}` })
  return rule
}
