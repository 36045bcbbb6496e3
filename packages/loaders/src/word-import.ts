/** The part of a UEditor Plus instance the Word import add-on uses. */
export interface WordImportEditor {
  getOpt(name: string): unknown
  /** `serverUrl` with `?action=<name>` (and `serverparam`), as the editor builds every action URL. */
  getActionUrl(name: string): string
}

export interface WordImportOptions {
  /** Where the editor's dialogs live (the page's document); every dialog iframe in it is watched. */
  document?: Document
  /** Injectable fetch; the page's by default. */
  fetch?: typeof fetch
  /** Send cookies to another origin (`credentials: 'include'`); same-origin cookies always go. */
  withCredentials?: boolean
}

/** What the server answers (docs/protocol.md, Word import on the server). */
export interface WordImportAnswer {
  state: string
  code?: string
  html?: string
  files?: unknown[]
  dropped?: number
}

/** What the stock dialog's page holds once it has started. */
interface ContentImportWindow extends Window {
  processWord?: (file: File) => void
  contentImport?: { data?: { result?: unknown } }
}

const PATCHED = Symbol.for('ueditor-backend.wordImport')

/**
 * Makes the stock `contentimport` dialog of UEditor Plus send a `.docx` or `.doc` to the server
 * (`?action=wordimport`, with the editor's `serverHeaders`) instead of converting it in the
 * browser, and show and insert the HTML the server answers, its pictures already stored. Markdown
 * stays the dialog's own. Answers a function that stops watching for new dialogs.
 */
export function wordImport(editor: WordImportEditor, options: WordImportOptions = {}): () => void {
  const doc = options.document ?? globalThis.document
  const patchFrame = (frame: HTMLIFrameElement) => {
    const patch = () => {
      try {
        patchDialog(frame.contentWindow as ContentImportWindow | null, editor, options)
      } catch {
        // A frame of another origin is not a dialog of this editor.
      }
    }
    frame.addEventListener('load', patch)
    patch()
  }
  for (const frame of doc.querySelectorAll('iframe')) patchFrame(frame)
  const observer = new MutationObserver((records) => {
    for (const record of records)
      for (const node of record.addedNodes) {
        if (!(node instanceof Element)) continue
        if (node.tagName === 'IFRAME') patchFrame(node as HTMLIFrameElement)
        for (const frame of node.querySelectorAll('iframe')) patchFrame(frame)
      }
  })
  observer.observe(doc.documentElement, { childList: true, subtree: true })
  return () => observer.disconnect()
}

/** Replaces the dialog's in-browser conversion with the server's, once per dialog page. */
function patchDialog(
  win: ContentImportWindow | null,
  editor: WordImportEditor,
  options: WordImportOptions,
): void {
  if (!win || typeof win.processWord !== 'function' || !win.contentImport) return
  const marked = win as unknown as Record<symbol, boolean>
  if (marked[PATCHED]) return
  marked[PATCHED] = true
  const page = win.document
  const tip = (text: string) => {
    const el = page.querySelector('.file-tip')
    if (el) el.textContent = text
  }
  win.processWord = (file: File) => {
    tip('正在由服务器转换 Word 文件，请稍后… / Converting on the server…')
    const result = page.querySelector<HTMLElement>('.file-result')
    if (result) {
      result.innerHTML = ''
      result.style.display = 'none'
    }
    sendToServer(editor, options, file).then(
      (html) => {
        if (win.contentImport) win.contentImport.data = { ...win.contentImport.data, result: html }
        if (result) {
          result.innerHTML = html
          result.style.display = 'block'
        }
        tip('转换成功 / Converted')
      },
      (e: unknown) =>
        tip(`Word 文件转换失败 / Import failed: ${e instanceof Error ? e.message : e}`),
    )
  }
}

/**
 * POSTs the file to the editor's `wordImportActionName` in its `wordImportFieldName` (from the
 * server's config answer, `wordimport` and `upfile` until it has come), with `serverHeaders`.
 * Answers the cleaned HTML; a refusal rejects with the server's readable `state`.
 */
export async function sendToServer(
  editor: WordImportEditor,
  options: WordImportOptions,
  file: Blob & { name?: string },
): Promise<string> {
  const text = (name: string, fallback: string) => {
    const v = editor.getOpt(name)
    return typeof v === 'string' && v !== '' ? v : fallback
  }
  const headers = editor.getOpt('serverHeaders')
  const form = new FormData()
  form.append(text('wordImportFieldName', 'upfile'), file, file.name ?? 'document.docx')
  const send = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
  const response = await send(editor.getActionUrl(text('wordImportActionName', 'wordimport')), {
    method: 'POST',
    body: form,
    headers: {
      Accept: 'application/json',
      ...(typeof headers === 'object' && headers !== null
        ? (headers as Record<string, string>)
        : {}),
    },
    credentials: options.withCredentials ? 'include' : 'same-origin',
  })
  let answer: WordImportAnswer
  try {
    answer = (await response.json()) as WordImportAnswer
  } catch {
    throw new Error(`HTTP ${response.status}`)
  }
  if (answer.state !== 'SUCCESS' || typeof answer.html !== 'string')
    throw new Error(typeof answer.state === 'string' ? answer.state : `HTTP ${response.status}`)
  return answer.html
}
