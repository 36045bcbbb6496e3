import type { ParsedServerConfig } from './schema.js'

type Editor = ParsedServerConfig['editor']

/**
 * With the renderer on and no `formulaConfig.imageUrlTemplate` of the operator's, the editor is
 * pointed at `<formula.path>.svg?{}` on this server: absolute when `publicUrl` is, keeping any
 * path in front of `routes.files` (a reverse-proxy prefix). The client puts the URL-encoded TeX
 * in place of `{}`.
 */
export function withFormulaRenderer(editor: Editor, cfg: ParsedServerConfig): Editor {
  if (!cfg.formula.enabled || editor.formulaConfig?.imageUrlTemplate) return editor
  const imageUrlTemplate = `${serverBase(cfg)}${cfg.formula.path}.svg?{}`
  return { ...editor, formulaConfig: { ...editor.formulaConfig, imageUrlTemplate } }
}

/** The origin (and reverse-proxy prefix) of this server when `publicUrl` is absolute, else "". */
export function serverBase(cfg: ParsedServerConfig): string {
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
