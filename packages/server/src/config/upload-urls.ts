import { serverBase } from './formula-url.js'
import type { ParsedServerConfig } from './schema.js'

/**
 * The `config` answer's URLs of the other ways to upload, present only where they are served:
 * `uploadTusUrl` (resumable uploads). In the same form as the answer's other URLs: absolute
 * when `publicUrl` is, keeping a reverse-proxy prefix in front of `routes.files`.
 */
export function uploadUrls(
  cfg: Pick<ParsedServerConfig, 'tus' | 'routes' | 'publicUrl'>,
): Record<string, string> {
  const base = serverBase(cfg)
  return cfg.tus.enabled ? { uploadTusUrl: `${base}${cfg.routes.tus}` } : {}
}
