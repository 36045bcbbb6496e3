import { isBlob } from './blob.js'
import type {
  EditorUploadCallback,
  UploadCategory,
  UploadResult,
  WebUploaderBlock,
} from './types.js'

/** The file of one editor call: the bytes, and the name and type the server will be told. */
export interface EditorFile {
  blob: Blob
  name: string
  type: string
}

/**
 * The native bytes of what the editor passed: a File (simple upload, paste), a nameless Blob
 * (scrawl), or WebUploader's block object (the dialogs: `block.file.source.source`, or the
 * bytes as `block.blob.source`), from this window or another (the dialogs' iframe). A Blob
 * without a name is named after its type (`scrawl.png`).
 */
export function editorFile(input: unknown, from: string): EditorFile {
  let blob: Blob | undefined
  let name: string | undefined
  if (isBlob(input)) {
    blob = input
    name = (input as Partial<File>).name
  } else if (typeof input === 'object' && input !== null) {
    const block = input as Partial<WebUploaderBlock>
    const source = block.file?.source?.source
    blob = isBlob(source) ? source : isBlob(block.blob?.source) ? block.blob.source : undefined
    name = block.file?.name ?? (blob as Partial<File> | undefined)?.name
  }
  if (!blob) throw new Error('the editor passed no file')
  const type = blob.type || ''
  return { blob, type, name: withExtension(name || (from === 'scrawl' ? 'scrawl' : 'file'), type) }
}

const EXTENSION_OF_TYPE: Record<string, string> = {
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/gif': '.gif',
  'image/webp': '.webp',
  'image/bmp': '.bmp',
  'video/mp4': '.mp4',
  'video/webm': '.webm',
  'audio/mpeg': '.mp3',
  'audio/ogg': '.ogg',
  'application/pdf': '.pdf',
}

/** The server checks the extension against its allow-list: a name without one gets its type's. */
function withExtension(name: string, type: string): string {
  if (/\.[A-Za-z0-9]{1,10}$/.test(name)) return name
  return name + (EXTENSION_OF_TYPE[type] ?? '')
}

/** The editor's allow-lists from the config answer, to place a pasted file. */
export interface AllowLists {
  imageAllowFiles?: unknown
  videoAllowFiles?: unknown
  audioAllowFiles?: unknown
}

/**
 * The server category of an editor call. `attachment` is `file`. Paste and drop always say
 * `image`, even for a PDF: there the file decides (its type, else its extension in the
 * config's allow-lists), so a pasted PDF is sent as a `file`, never as an image.
 */
export function uploadCategory(
  type: string,
  from: string,
  file: EditorFile,
  lists: AllowLists = {},
): UploadCategory {
  if (type === 'video' || type === 'audio') return type
  if (type === 'attachment') return 'file'
  if (type !== 'image') throw new Error(`unknown upload type "${type}"`)
  if (from !== 'paste') return 'image'
  const major = file.type.split('/')[0]
  if (major === 'image' || major === 'video' || major === 'audio') return major
  const ext = /\.[^.]+$/.exec(file.name)?.[0]?.toLowerCase()
  if (ext !== undefined) {
    if (allows(lists.imageAllowFiles, ext)) return 'image'
    if (allows(lists.videoAllowFiles, ext)) return 'video'
    if (allows(lists.audioAllowFiles, ext)) return 'audio'
  }
  return 'file'
}

const allows = (list: unknown, ext: string) =>
  Array.isArray(list) && list.some((e) => typeof e === 'string' && e.toLowerCase() === ext)

/**
 * The editor answer from a server answer: a `SUCCESS` with a `url` becomes the result every
 * `from` reads (`state`, `url`, `title`, `original`, plus `type` and `size`, nothing else);
 * anything else is the refusal's readable `state`, thrown as the error message.
 */
export function editorAnswer(answer: unknown, file: EditorFile): UploadResult {
  const a = (typeof answer === 'object' && answer !== null ? answer : {}) as Record<string, unknown>
  if (a.state !== 'SUCCESS' || typeof a.url !== 'string' || a.url === '') {
    throw new Error(typeof a.state === 'string' && a.state ? a.state : 'upload failed')
  }
  // The usual answer only: the complete answer's `location`, `key` and `id` are not the editor's.
  const result: UploadResult = {
    state: 'SUCCESS',
    url: a.url,
    title: typeof a.title === 'string' ? a.title : file.name,
    original: typeof a.original === 'string' ? a.original : file.name,
  }
  if (typeof a.type === 'string') result.type = a.type
  if (typeof a.size === 'number') result.size = a.size
  return result
}

/**
 * The editor's callbacks, made to end exactly once: the first `success` or `error` wins and
 * later ones are dropped; progress is a fraction in [0, 1], never going back, and stops at the
 * end. A callback that throws does not turn a success into an error.
 */
export function onceCallbacks(callback: Partial<EditorUploadCallback> | undefined) {
  let ended = false
  let reported = false
  let last = 0
  const safely = (fn: (() => void) | undefined) => {
    try {
      fn?.()
    } catch (e) {
      // The editor's own fault: reported as uncaught, without ending the call a second time.
      const report =
        (globalThis as { reportError?: (e: unknown) => void }).reportError ??
        ((error: unknown) =>
          setTimeout(() => {
            throw error
          }))
      report(e)
    }
  }
  return {
    get ended() {
      return ended
    },
    progress(fraction: number) {
      if (ended || !Number.isFinite(fraction)) return
      const p = Math.min(1, Math.max(last, fraction))
      if (reported && p === last) return
      reported = true
      last = p
      safely(() => callback?.progress?.(p))
    },
    success(result: UploadResult) {
      if (ended) return
      ended = true
      safely(() => callback?.success?.(result))
    },
    error(message: string) {
      if (ended) return
      ended = true
      safely(() => callback?.error?.(message))
    },
  }
}
