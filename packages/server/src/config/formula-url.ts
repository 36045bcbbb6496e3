import type { ParsedServerConfig } from './schema.js'

type Editor = ParsedServerConfig['editor']

/**
 * With the renderer on and no `formulaConfig.imageUrlTemplate` of the operator's, the editor is
 * pointed at `<formula.path>.svg?{}` on this server: absolute when `publicUrl` is, keeping any
 * path in front of `routes.files` (a reverse-proxy prefix). The client puts the URL-encoded TeX
 * in place of `{}`.
 *
 * While the template is this server's, the formula dialog is also switched to its `plain` mode
 * (a local text box previewed through the template) unless the operator set `editorMode` or
 * `editorLiveServer`: the editor's own default, `live`, embeds a third-party site in the dialog,
 * which is blank offline and on any network that cannot reach it. The dialog reads
 * `formulaConfig.editorMode`: `'live'` shows the embedded site, anything else the text box.
 */
export function withFormulaRenderer(editor: Editor, cfg: ParsedServerConfig): Editor {
  if (!cfg.formula.enabled) return editor
  const own = editor.formulaConfig ?? {}
  const imageUrlTemplate = own.imageUrlTemplate ?? `${serverBase(cfg)}${cfg.formula.path}.svg?{}`
  const ours = isOwnTemplate(imageUrlTemplate, cfg.formula.path)
  const plain = ours && own.editorMode === undefined && own.editorLiveServer === undefined
  return {
    ...editor,
    formulaConfig: { ...own, imageUrlTemplate, ...(plain ? { editorMode: 'plain' } : {}) },
  }
}

/** A template that renders through this server's `<formula.path>.svg` or `.png`. */
function isOwnTemplate(template: string, path: string): boolean {
  const beforeQuery = template.split('?')[0] ?? ''
  return beforeQuery.endsWith(`${path}.svg`) || beforeQuery.endsWith(`${path}.png`)
}

/** The origin (and reverse-proxy prefix) of this server when `publicUrl` is absolute, else "". */
export function serverBase(cfg: Pick<ParsedServerConfig, 'publicUrl' | 'routes'>): string {
  const pub = cfg.publicUrl
  if (!pub || !/^(https?:)?\/\//i.test(pub)) return ''
  let url: URL
  try {
    url = new URL(pub, 'https://placeholder.invalid')
  } catch {
    return ''
  }
  const origin = pub.startsWith('//') ? `//${url.host}` : url.origin
  const files = `${cfg.routes.files}/`
  const path = url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`
  const prefix = path.endsWith(files) ? path.slice(0, -files.length) : ''
  return `${origin}${prefix}`
}
