import { type EditorFile, editorAnswer } from '../upload/editor.js'
import { postUpload } from '../upload/post.js'
import type { ServerSettings } from '../upload/server.js'
import {
  cropFractions,
  displaySize,
  type RtfPicture,
  rtfPictures,
  wmfFile,
} from './rtf-pictures.js'

/** The part of a UEditor Plus instance the add-on uses. */
export interface WordPasteEditor {
  /** The editing area's body (in the editor's iframe), there once the editor is ready. */
  body?: HTMLElement | null
  isReady?: unknown
  ready?(fn: () => void): void
  getOpt(key: string): unknown
  addListener(type: string, fn: (...args: unknown[]) => unknown): void
  removeListener?(type: string, fn: (...args: unknown[]) => unknown): void
  fireEvent(type: string, ...args: unknown[]): unknown
  queryCommandValue?(command: string): unknown
}

export interface WordPasteOptions {
  /** Send cookies to a `serverUrl` on another origin (same-origin ones always go). Default false. */
  withCredentials?: boolean
  /** How long to wait for the editor's `afterpaste` after a paste, in ms. Default 10 s. */
  afterPasteTimeout?: number
  /** Called once per paste that carried Word pictures, when its uploads have ended. */
  onPasted?(report: WordPasteReport): void
  /** Injectable fetch (used only where there is no XMLHttpRequest). */
  fetch?: typeof fetch
}

/** What became of one paste's pictures. */
export interface WordPasteReport {
  /** Pictures in the clipboard's RTF. */
  pictures: number
  /** `file:///` pictures in the clipboard's HTML. */
  sources: number
  /** Placeholders this paste left in the editor. */
  placeholders: number
  /** Placeholders now showing the stored picture. */
  replaced: number
  /** Placeholders left for the editor's Word-image dialog, and why. */
  left: { src: string; reason: string }[]
}

export interface WordPaste {
  /** Stops listening; uploads already running still end. */
  dispose(): void
}

/** What UEditor Plus's `wordimage` input rule matches: `file:` followed by slashes. */
const WORD_FILE = /^file:\/+/
const PLACEHOLDER = 'data-word-image'

interface Pending {
  rtf: string
  sources: string[]
  before: Set<Element>
  timer: ReturnType<typeof setTimeout>
}

/**
 * Pasting from Word with its pictures, without the Word-image dialog. On a paste that carries
 * `text/rtf` (Chromium-based browsers on Windows and macOS), it reads every picture from the
 * RTF, and once the editor has inserted the paste, uploads each one the way the editor's image
 * upload does (`serverUrl`, `imageActionName`, `imageFieldName`, `serverHeaders`, `serverparam`,
 * or the page's `uploadServiceUpload` when the editor hands uploads to it) and puts the stored
 * URL into the matching `data-word-image` placeholder. Pictures and placeholders are matched by
 * order; what cannot be matched or is refused stays a placeholder for the stock dialog. A paste
 * without `text/rtf` is left entirely to the editor.
 */
export function wordPaste(editor: WordPasteEditor, options: WordPasteOptions = {}): WordPaste {
  let body: HTMLElement | null | undefined
  let pending: Pending | undefined
  let disposed = false

  const onPaste = (event: Event) => {
    // A paste the editor never finished (no `afterpaste`) must not be matched with this one.
    if (pending) clearTimeout(pending.timer)
    pending = undefined
    const data = (event as ClipboardEvent).clipboardData
    const rtf = data?.getData('text/rtf') ?? ''
    if (!rtf || !body) return
    const sources = wordSources(data?.getData('text/html') ?? '')
    if (sources.length === 0) return
    const timer = setTimeout(() => {
      pending = undefined
    }, options.afterPasteTimeout ?? 10_000)
    pending = { rtf, sources, before: new Set(placeholders(body)), timer }
  }

  const onAfterPaste = () => {
    const paste = pending
    pending = undefined
    if (!paste || !body) return
    clearTimeout(paste.timer)
    const fresh = placeholders(body).filter((img) => !paste.before.has(img))
    if (fresh.length === 0) return
    handlePaste(editor, options, paste, fresh).then(
      (report) => options.onPasted?.(report),
      () => undefined,
    )
  }

  const start = () => {
    if (disposed || body) return
    body = editor.body
    body?.addEventListener('paste', onPaste)
    editor.addListener('afterpaste', onAfterPaste)
  }
  if (editor.body && editor.isReady) start()
  else if (typeof editor.ready === 'function') editor.ready(start)
  else editor.addListener('ready', start)

  return {
    dispose() {
      disposed = true
      body?.removeEventListener('paste', onPaste)
      editor.removeListener?.('afterpaste', onAfterPaste)
      if (pending) clearTimeout(pending.timer)
      pending = undefined
    },
  }
}

/** The `file:` picture addresses of the clipboard's HTML, in order (an inert parse: no loads). */
function wordSources(html: string): string[] {
  if (!html || typeof DOMParser === 'undefined') return []
  const doc = new DOMParser().parseFromString(html, 'text/html')
  return [...doc.querySelectorAll('img')]
    .map((img) => img.getAttribute('src') ?? '')
    .filter((src) => WORD_FILE.test(src))
}

function placeholders(body: HTMLElement): Element[] {
  return [...body.querySelectorAll(`img[${PLACEHOLDER}]`)]
}

async function handlePaste(
  editor: WordPasteEditor,
  options: WordPasteOptions,
  paste: Pending,
  fresh: Element[],
): Promise<WordPasteReport> {
  const pictures = rtfPictures(paste.rtf)
  const report: WordPasteReport = {
    pictures: pictures.length,
    sources: paste.sources.length,
    placeholders: fresh.length,
    replaced: 0,
    left: [],
  }
  const leave = (img: Element, reason: string) =>
    report.left.push({ src: img.getAttribute(PLACEHOLDER) ?? '', reason })
  if (pictures.length !== paste.sources.length) {
    for (const img of fresh)
      leave(img, `the RTF holds ${pictures.length} pictures, the HTML ${paste.sources.length}`)
    return report
  }
  // The n-th placeholder is the n-th picture. When the editor kept fewer than the HTML had (its
  // filter rules dropped some), each is the next unused HTML picture with its address.
  const byOrder = fresh.length === paste.sources.length
  const used = new Set<number>()
  const work: { img: Element; picture: RtfPicture; index: number }[] = []
  for (const [n, img] of fresh.entries()) {
    const src = img.getAttribute(PLACEHOLDER)
    const index = byOrder ? n : paste.sources.findIndex((s, i) => s === src && !used.has(i))
    const picture = pictures[index]
    if (index < 0 || !picture) {
      leave(img, 'not among the pasted pictures')
      continue
    }
    used.add(index)
    work.push({ img, picture, index })
  }
  const settings = editorSettings(editor, options)
  let changed = false
  // One at a time: metafile conversions queue on the server, a paste should not fill the queue.
  for (const { img, picture, index } of work) {
    const src = img.getAttribute(PLACEHOLDER) ?? ''
    try {
      const file = await pictureFile(picture, src, index)
      const refusal = clientRefusal(editor, file)
      if (refusal) {
        leave(img, refusal)
        continue
      }
      const result = await upload(editor, settings, file)
      if (!img.isConnected || img.getAttribute(PLACEHOLDER) !== src) {
        leave(img, 'the placeholder left the document')
        continue
      }
      const url = String(editor.getOpt('imageUrlPrefix') ?? '') + result.url
      img.setAttribute('src', url)
      img.setAttribute('_src', url)
      img.removeAttribute(PLACEHOLDER)
      img.removeAttribute('style')
      const size = displaySize(picture)
      if (size) {
        img.setAttribute('width', String(size.width))
        img.setAttribute('height', String(size.height))
      }
      report.replaced++
      changed = true
    } catch (e) {
      leave(img, messageOf(e))
    }
  }
  if (changed) {
    editor.fireEvent('contentchange')
    editor.fireEvent('saveScene')
  }
  return report
}

/**
 * One picture through the editor's own image upload: the page's `uploadServiceUpload` when the
 * editor hands uploads to it (`uploadServiceEnable`), called as for a pasted file; else the
 * editor's multipart POST.
 */
async function upload(
  editor: WordPasteEditor,
  settings: ServerSettings,
  file: EditorFile,
): Promise<{ url: string }> {
  const service = editor.getOpt('uploadServiceEnable') ? editor.getOpt('uploadServiceUpload') : 0
  if (typeof service === 'function') {
    const native = new File([file.blob], file.name, { type: file.type })
    const answer = await new Promise<unknown>((resolve, reject) =>
      (service as PageUploader)(
        'image',
        native,
        {
          success: resolve,
          error: (message) => reject(new Error(String(message || 'upload failed'))),
          progress: () => undefined,
        },
        { from: 'paste' },
      ),
    )
    return editorAnswer(answer, file)
  }
  const config = {
    imageActionName: editor.getOpt('imageActionName'),
    imageFieldName: editor.getOpt('imageFieldName'),
  }
  const signal = new AbortController().signal
  return editorAnswer(
    await postUpload(settings, config, 'image', file, () => undefined, signal),
    file,
  )
}

type PageUploader = (
  type: string,
  file: File,
  callback: {
    success(res: unknown): void
    error(message: unknown): void
    progress(p: number): void
  },
  option: { from: string },
) => void

/** The editor's own upload settings, read at upload time (a token in `serverHeaders` may change). */
function editorSettings(editor: WordPasteEditor, options: WordPasteOptions): ServerSettings {
  const serverUrl = String(editor.getOpt('serverUrl') ?? '')
  const params = editor.queryCommandValue?.('serverparam')
  return {
    serverUrl: withServerParams(serverUrl, params),
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    withCredentials: options.withCredentials ?? false,
    async headers() {
      const headers: Record<string, string> = {}
      const given = editor.getOpt('serverHeaders')
      if (typeof given === 'object' && given !== null)
        for (const [name, value] of Object.entries(given))
          if (typeof value === 'string' || typeof value === 'number') headers[name] = String(value)
      return headers
    },
    async withToken(url) {
      return url
    },
    async tokenParam() {
      return undefined
    },
  }
}

/** `serverUrl` with the `serverparam` values in its query, as the editor's uploads add them. */
function withServerParams(serverUrl: string, params: unknown): string {
  if (typeof params !== 'object' || params === null) return serverUrl
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) {
    if (Array.isArray(value)) for (const v of value) query.append(`${name}[]`, String(v))
    else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      query.append(name, String(value))
  }
  const text = query.toString()
  if (!text) return serverUrl
  return serverUrl + (serverUrl.includes('?') ? '&' : '?') + text
}

const FILE_OF_FORMAT = {
  png: { ext: '.png', type: 'image/png' },
  jpeg: { ext: '.jpg', type: 'image/jpeg' },
  emf: { ext: '.emf', type: 'image/emf' },
  wmf: { ext: '.wmf', type: 'image/wmf' },
} as const

/**
 * The file to upload: named after Word's temporary file (`clip_image002`) with the extension of
 * what the RTF holds; a cropped PNG or JPEG cut as Word shows it, a WMF with its placeable header.
 */
async function pictureFile(picture: RtfPicture, src: string, index: number): Promise<EditorFile> {
  if (picture.format === 'other') throw new Error('a picture format the server does not take')
  const { ext, type } = FILE_OF_FORMAT[picture.format]
  const stem = fileStem(src) || `word-image-${index + 1}`
  const bytes = picture.format === 'wmf' ? wmfFile(picture) : picture.bytes
  let blob = new Blob([bytes as Uint8Array<ArrayBuffer>], { type })
  const crop = cropFractions(picture)
  if (crop && (picture.format === 'png' || picture.format === 'jpeg'))
    blob = await cropBitmap(blob, type, crop)
  return { blob, type, name: stem + ext }
}

function fileStem(src: string): string {
  let last = src.split(/[\\/]/).pop() ?? ''
  try {
    last = decodeURIComponent(last)
  } catch {
    // Left as written.
  }
  return last.replace(/\.[^.]*$/, '').replace(/[^\w.\- ]+/g, '_')
}

async function cropBitmap(
  blob: Blob,
  type: string,
  c: { left: number; right: number; top: number; bottom: number },
): Promise<Blob> {
  const bitmap = await createImageBitmap(blob)
  const sx = Math.round(bitmap.width * c.left)
  const sy = Math.round(bitmap.height * c.top)
  const sw = Math.max(1, Math.round(bitmap.width * (1 - c.left - c.right)))
  const sh = Math.max(1, Math.round(bitmap.height * (1 - c.top - c.bottom)))
  const canvas = new OffscreenCanvas(sw, sh)
  const context = canvas.getContext('2d')
  if (!context) throw new Error('no canvas to crop the picture')
  context.drawImage(bitmap, sx, sy, sw, sh, 0, 0, sw, sh)
  bitmap.close()
  return canvas.convertToBlob(type === 'image/jpeg' ? { type, quality: 0.92 } : { type })
}

/** What the editor itself would refuse before sending: an extension or size it does not take. */
function clientRefusal(editor: WordPasteEditor, file: EditorFile): string | undefined {
  const allowed = editor.getOpt('imageAllowFiles')
  const ext = /\.[^.]+$/.exec(file.name)?.[0]?.toLowerCase() ?? ''
  if (
    Array.isArray(allowed) &&
    !allowed.some((e) => typeof e === 'string' && e.toLowerCase() === ext)
  )
    return `the server does not take ${ext} pictures`
  const max = editor.getOpt('imageMaxSize')
  if (typeof max === 'number' && max > 0 && file.blob.size > max)
    return `the picture is larger than ${max} bytes`
  return undefined
}

function messageOf(e: unknown): string {
  const message = typeof e === 'object' && e !== null ? (e as { message?: unknown }).message : ''
  return typeof message === 'string' && message !== '' ? message : 'upload failed'
}
