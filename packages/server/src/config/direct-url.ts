import { serverBase } from './formula-url.js'
import type { ParsedServerConfig } from './schema.js'

type Editor = ParsedServerConfig['editor']

/** The `config` answer's key naming where direct uploads are signed. */
export const DIRECT_URL_KEY = 'uploadDirectUrl'

/** Whether `routes.s3` is served: direct uploads on, and the files stored in an S3 bucket. */
export function directUploadsServed(cfg: Pick<ParsedServerConfig, 'direct' | 'storage'>): boolean {
  return cfg.direct.enabled && cfg.storage.driver === 's3'
}

/**
 * With direct uploads served, `config` names where they are signed (`uploadDirectUrl`): the
 * value `@uppy/aws-s3` takes as `companionEndpoint`, absolute when `publicUrl` is.
 */
export function withDirectUploads(editor: Editor, cfg: ParsedServerConfig): Editor {
  if (!directUploadsServed(cfg)) return editor
  return { ...editor, [DIRECT_URL_KEY]: `${serverBase(cfg)}${cfg.routes.s3}` }
}
