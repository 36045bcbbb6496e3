import { Readable } from 'node:stream'
import { uploadClientKey } from '../../admission/gate.js'
import { uploadResult } from '../../admission/results.js'
import type { UploadRule } from '../../admission/rules.js'
import { storeTempFile } from '../../admission/store.js'
import type { FileEntry } from '../../db/types.js'
import { removeAnnounced } from '../../events/file-events.js'
import { claimedExtension } from '../../ingest/display-name.js'
import { readSingleFile } from '../../ingest/multipart.js'
import { sniffAllowedExtension } from '../../ingest/sniff.js'
import { createSpool, type Spool } from '../../ingest/temp-file.js'
import { UeError } from '../../shared/errors.js'
import { METAFILE_EXTS, metafileExtAgrees } from '../../shared/metafile-header.js'
import type { UploadResult } from '../../shared/types.js'
import type { DocxHtml } from '../../word/docx-html.js'
import { DROPPED_SRC } from '../../word/docx-html.js'
import type { WordImportRule } from '../action-table.js'
import type { ActionContext } from '../deps.js'

export interface WordImportResult {
  state: 'SUCCESS'
  /** The document as HTML, cleaned by the documents cleaner's rules; pictures point at `files`. */
  html: string
  /** Each picture stored, as an image upload answers it. */
  files: UploadResult[]
  /** Pictures left out: linked outside the document, or of a type no image may be. */
  dropped: number
}

/** Names that always carry macros. */
const MACRO_EXTS = ['.docm', '.dotm']

/**
 * A `.docx` or `.doc` in, its HTML out. The document is converted without storing anything
 * (`deps.word.importer`); then each picture is stored as an image upload (`storePictures`), and
 * the HTML, its pictures pointing at them, is cleaned. Refused at any step, nothing stays stored.
 */
export async function handleWordImport(
  ctx: ActionContext,
  rule: WordImportRule,
): Promise<WordImportResult> {
  const { config, word } = ctx.deps
  if (!word) throw new UeError('UE_ACTION_UNKNOWN')
  const spool = createSpool(config.uploads.tempDir, ctx.deps.metrics)
  try {
    const file = await readSingleFile(ctx.request, spool, {
      fieldNames: rule.fieldNames,
      maxSize: rule.maxSize,
      maxFields: config.uploads.maxFields,
      timeouts: config.http,
      // A name that cannot pass is refused on the first bytes, not after the whole body.
      inspect: async (_head, name) => vetName(rule, claimedExtension(name)),
    })
    const ext = vetName(rule, claimedExtension(file.originalName))
    const client = uploadClientKey(ctx.actor) ?? ''
    const doc = await word.importer.convert(file.path, file.head, ext, client)
    const stored = await storePictures(ctx, rule.pictures, doc, spool)
    try {
      const html = await word.clean(withPictureUrls(doc.html, stored.urls))
      return {
        state: 'SUCCESS',
        html,
        files: stored.entries.map((e) => uploadResult(config.publicUrl, e)),
        dropped: doc.dropped + stored.dropped,
      }
    } catch (e) {
      await removeStored(ctx, stored.entries)
      throw e
    }
  } finally {
    await spool.dispose()
  }
}

function vetName(rule: WordImportRule, ext: string): string {
  if (MACRO_EXTS.includes(ext)) throw new UeError('UE_WORD_MACROS', { detail: ext })
  if (!rule.allowFiles.includes(ext)) throw new UeError('UE_TYPE_NOT_ALLOWED')
  return ext
}

interface StoredPictures {
  entries: FileEntry[]
  /** Picture index → its URL; a picture left out has none. */
  urls: Map<number, string>
  dropped: number
}

/**
 * The one place the import stores: each picture through the ending of every image upload
 * (type from its bytes, the image pipeline with EMF/WMF to PNG, owner, quota, a server key, the
 * index row), one after another. A picture whose bytes are no allowed image type is left out;
 * any other refusal removes the pictures already stored and refuses the import.
 */
async function storePictures(
  ctx: ActionContext,
  rule: UploadRule,
  doc: DocxHtml,
  spool: Spool,
): Promise<StoredPictures> {
  const out: StoredPictures = { entries: [], urls: new Map(), dropped: 0 }
  try {
    for (const [index, picture] of doc.pictures.entries()) {
      const ext = await pictureExt(picture.bytes, rule.allowFiles)
      if (!ext) {
        out.dropped++
        continue
      }
      const base = picture.part.slice(picture.part.lastIndexOf('/') + 1).replace(/\.[^.]*$/, '')
      const file = await spool.write(
        Readable.from([picture.bytes]),
        rule.maxSize,
        `${base || 'picture'}${ext}`,
      )
      try {
        const entry = await storeTempFile(ctx.deps, file, rule, ext, ctx.actor)
        out.entries.push(entry)
        out.urls.set(index, uploadResult(ctx.deps.config.publicUrl, entry).url)
      } finally {
        await file.dispose()
      }
    }
    return out
  } catch (e) {
    await removeStored(ctx, out.entries)
    throw e
  }
}

/** The allowed image extension a picture's bytes are, or null. */
async function pictureExt(bytes: Buffer, allowFiles: readonly string[]): Promise<string | null> {
  const head = bytes.subarray(0, 4100)
  const metafile = METAFILE_EXTS.find((e) => allowFiles.includes(e) && metafileExtAgrees(e, head))
  return metafile ?? sniffAllowedExtension(head, allowFiles)
}

async function removeStored(ctx: ActionContext, entries: readonly FileEntry[]): Promise<void> {
  const { deps } = ctx
  const announcing = { files: deps.files, events: deps.events, publicUrl: deps.config.publicUrl }
  for (const entry of entries) {
    try {
      await removeAnnounced(announcing, entry.key, 'import')
      await deps.storage.delete(entry.key)
    } catch (e) {
      deps.log.error({ err: e, key: entry.key }, 'undo of a Word import picture failed')
    }
  }
}

const PICTURE_TAG = /<img\b[^>]*>/g
const SRC = /\ssrc="([^"]*)"/

/** Each picture's placeholder replaced by its stored URL; a picture left out loses its tag. */
function withPictureUrls(html: string, urls: ReadonlyMap<number, string>): string {
  return html.replace(PICTURE_TAG, (tag) => {
    const src = SRC.exec(tag)?.[1]
    if (src === undefined || !src.startsWith('ue-word-picture:')) return tag
    const index = src === DROPPED_SRC ? -1 : Number(src.slice('ue-word-picture:'.length))
    const url = urls.get(index)
    return url === undefined ? '' : tag.replace(SRC, ` src="${escapeAttr(url)}"`)
  })
}

function escapeAttr(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')
}
