import type { ParsedServerConfig } from './schema.js'
import { uploadUrls } from './upload-urls.js'

export interface CrossOriginProblem {
  /** The relative URLs, each as `what (url)`. */
  relative: string[]
  message: string
  fix: string
}

const isAbsolute = (url: string) => /^(https?:)?\/\//i.test(url.trim())

/**
 * With `http.corsOrigins` set, the editor page is on another origin, and the browser resolves
 * every relative URL of the config answer against the page, where this server is not: stored
 * images break, formulas do not render and the AI dialog posts into a 404. Nothing fails at
 * start, so this names them (at start and in `doctor`).
 */
export function crossOriginProblem(
  cfg: Pick<ParsedServerConfig, 'http' | 'editor' | 'publicUrl' | 'tus' | 'routes'> & {
    publicUrl: string
  },
): CrossOriginProblem | undefined {
  if (cfg.http.corsOrigins.length === 0) return undefined
  const relative: string[] = []
  const prefixes = Object.entries(cfg.editor).filter(([key]) => key.endsWith('UrlPrefix'))
  const prefixed = prefixes.every(([, v]) => typeof v === 'string' && isAbsolute(v))
  if (!isAbsolute(cfg.publicUrl) && !prefixed) relative.push(`stored files (${cfg.publicUrl})`)
  const template = cfg.editor.formulaConfig?.imageUrlTemplate
  if (template !== undefined && !isAbsolute(template))
    relative.push(`formulaConfig.imageUrlTemplate (${template})`)
  const ai = cfg.editor.ai as { driverConfig?: { url?: unknown } } | undefined
  const aiUrl = ai?.driverConfig?.url
  if (typeof aiUrl === 'string' && !isAbsolute(aiUrl))
    relative.push(`ai.driverConfig.url (${aiUrl})`)
  const direct = cfg.editor.uploadDirectUrl
  if (typeof direct === 'string' && !isAbsolute(direct))
    relative.push(`uploadDirectUrl (${direct})`)
  for (const [key, url] of Object.entries(uploadUrls(cfg)))
    if (!isAbsolute(url)) relative.push(`${key} (${url})`)
  if (relative.length === 0) return undefined
  return {
    relative,
    message:
      `http.corsOrigins is set (the editor page is on another origin), but the config answer ` +
      `names relative URLs: ${relative.join(', ')}; the browser resolves them against the ` +
      `page's origin, not this server's, so stored images break, formulas do not render and ` +
      `the AI dialog and resumable uploads get 404`,
    fix:
      "set UEDITOR_PUBLIC_URL (publicUrl) to this server's absolute URL of stored files, such " +
      'as https://ue.example.com/uploads/; the formula, AI and upload URLs follow it unless set on their own (docs/deploy.md)',
  }
}
