import { IMAGE_CATEGORIES, type UploadRule, type UploadRules } from '../admission/rules.js'
import type { EditorConfig } from '../config/schema.js'
import { UPLOAD_CATEGORIES, type UploadCategory } from '../db/upload-ledger.js'
import { UeError } from '../shared/errors.js'
import type { Category } from '../shared/types.js'

export type ActionKind =
  | 'config'
  | 'upload'
  | 'base64'
  | 'catch'
  | 'list'
  | 'delete'
  | 'ai'
  | 'uploadresult'
  | 'wordimport'

/** The action that answers what a resumable or direct upload came to (docs/uploads.md). */
export const UPLOAD_RESULT_ACTION = 'uploadresult'

export interface CatchRule extends UploadRule {
  localDomains: readonly string[]
}

/** A Word document in, HTML out; its pictures are stored under `pictures` (the image rule). */
export interface WordImportRule {
  fieldNames: readonly string[]
  maxSize: number
  /** `.docx`, and `.doc` where LibreOffice is found. */
  allowFiles: readonly string[]
  pictures: UploadRule
}

export interface ListRule {
  categories: readonly Category[]
  listSize: number
  allowFiles: readonly string[]
}

export type ActionDef =
  | { name: string; kind: 'config' }
  | { name: string; kind: 'upload' | 'base64'; rule: UploadRule }
  | { name: string; kind: 'catch'; rule: CatchRule }
  | { name: string; kind: 'list'; rule: ListRule }
  | { name: string; kind: 'delete' }
  | { name: string; kind: 'ai' }
  | { name: string; kind: 'uploadresult' }
  | { name: string; kind: 'wordimport'; rule: WordImportRule }

export type ActionTable = ReadonlyMap<string, ActionDef>

/**
 * The routes are data: built from the editor config, so renaming `imageActionName` renames
 * the action. Two entries may share a name only when they are the same upload (snapscreen
 * usually reuses the image action); any other clash is a configuration error.
 */
export function buildActionTable(
  e: EditorConfig,
  extra: { deleteActionName?: string | undefined; aiActionName?: string | undefined } = {},
): ActionTable {
  const image: UploadRule = {
    category: 'image',
    fieldNames: unique([e.imageFieldName, 'upfile']),
    maxSize: e.imageMaxSize,
    allowFiles: e.imageAllowFiles,
    pathFormat: e.imagePathFormat,
  }
  const defs: ActionDef[] = [
    { name: 'config', kind: 'config' },
    { name: e.imageActionName, kind: 'upload', rule: image },
    {
      name: e.scrawlActionName,
      kind: 'base64',
      rule: {
        category: 'scrawl',
        fieldNames: unique([e.scrawlFieldName, 'upfile']),
        maxSize: e.scrawlMaxSize,
        allowFiles: ['.png'],
        pathFormat: e.scrawlPathFormat,
      },
    },
    {
      name: e.snapscreenActionName,
      kind: 'upload',
      rule: { ...image, category: 'snapscreen', pathFormat: e.snapscreenPathFormat },
    },
    {
      name: e.catcherActionName,
      kind: 'catch',
      rule: {
        category: 'catch',
        fieldNames: [e.catcherFieldName],
        maxSize: e.catcherMaxSize,
        allowFiles: e.catcherAllowFiles,
        pathFormat: e.catcherPathFormat,
        localDomains: e.catcherLocalDomain,
      },
    },
    ...(['video', 'audio', 'file'] as const).map(
      (kind): ActionDef => ({
        name: e[`${kind}ActionName`],
        kind: 'upload',
        rule: {
          category: kind,
          fieldNames: [e[`${kind}FieldName`]],
          maxSize: e[`${kind}MaxSize`],
          allowFiles: e[`${kind}AllowFiles`],
          pathFormat: e[`${kind}PathFormat`],
        },
      }),
    ),
    {
      name: e.wordImportActionName,
      kind: 'wordimport',
      rule: {
        fieldNames: unique([e.wordImportFieldName, 'upfile']),
        maxSize: e.wordImportMaxSize,
        allowFiles: e.wordImportAllowFiles,
        pictures: image,
      },
    },
    {
      name: e.imageManagerActionName,
      kind: 'list',
      rule: {
        categories: IMAGE_CATEGORIES,
        listSize: e.imageManagerListSize,
        allowFiles: e.imageManagerAllowFiles,
      },
    },
    {
      name: e.fileManagerActionName,
      kind: 'list',
      rule: {
        categories: ['file'],
        listSize: e.fileManagerListSize,
        allowFiles: e.fileManagerAllowFiles,
      },
    },
    ...(extra.deleteActionName ? [{ name: extra.deleteActionName, kind: 'delete' as const }] : []),
    ...(extra.aiActionName ? [{ name: extra.aiActionName, kind: 'ai' as const }] : []),
    { name: UPLOAD_RESULT_ACTION, kind: 'uploadresult' },
  ]

  const table = new Map<string, ActionDef>()
  const clashes: string[] = []
  for (const def of defs) {
    const existing = table.get(def.name)
    if (!existing) table.set(def.name, def)
    else if (!(isSnapOnImage(existing, def) || isSnapOnImage(def, existing)))
      clashes.push(`action name "${def.name}" is used by two different actions`)
  }
  if (clashes.length > 0) throw new UeError('UE_CONFIG_INVALID', { detail: clashes.join('; ') })
  return table
}

/**
 * The rule of each category a resumable or direct upload may name: the same limits a multipart
 * POST of it gets.
 */
export function uploadRules(table: ActionTable): UploadRules {
  const rules = new Map<UploadCategory, UploadRule>()
  for (const def of table.values())
    if (def.kind === 'upload' && isUploadCategory(def.rule.category))
      rules.set(def.rule.category, def.rule)
  for (const category of UPLOAD_CATEGORIES)
    if (!rules.has(category))
      throw new UeError('UE_CONFIG_INVALID', { detail: `no upload action stores ${category}` })
  return rules
}

function isUploadCategory(category: Category): category is UploadCategory {
  return (UPLOAD_CATEGORIES as readonly string[]).includes(category)
}

function isSnapOnImage(first: ActionDef, second: ActionDef): boolean {
  return (
    first.kind === 'upload' &&
    second.kind === 'upload' &&
    first.rule.category === 'image' &&
    second.rule.category === 'snapscreen'
  )
}

function unique(values: string[]): string[] {
  return [...new Set(values)]
}
