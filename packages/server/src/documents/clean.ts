import type { ServerConfig } from '../config/load.js'
import type { StorageKey } from '../shared/types.js'
import { articleUrls } from './article-urls.js'
import { fileUrls } from './references.js'
import { type ArticleLimits, createArticleSanitizer } from './sanitize.js'

/** What cleaning needs, as plain data: it is handed to worker threads. */
export interface CleanSettings {
  /** `documents.iframeHosts`. */
  iframeHosts: string[]
  limits: ArticleLimits
  /** The part of the config that says which URLs are this server's stored files. */
  files: Pick<ServerConfig, 'publicUrl' | 'routes' | 'editor'>
}

/** A cleaned article and what it uses. */
export interface CleanedArticle {
  html: string
  /** Keys of this server's stored files it references, as found (repeats possible). */
  keys: StorageKey[]
  /** Remote (http or https) images still in it, as written, each once. */
  foreign: string[]
}

export function cleanSettings(config: ServerConfig): CleanSettings {
  const { documents, publicUrl, routes, editor } = config
  return {
    iframeHosts: [...documents.iframeHosts],
    limits: { maxDepth: documents.maxDepth, maxElements: documents.maxElements },
    files: { publicUrl, routes, editor },
  }
}

/**
 * The whole work of a save that depends on the article alone: clean it, then read the
 * addresses out of the cleaned HTML. Each step is one pass over the text; an article past the
 * limits is refused with UE_DOCUMENT_TOO_COMPLEX.
 */
export function createArticleCleaner(s: CleanSettings): (html: string) => CleanedArticle {
  // `fileUrls` reads only these parts of the config.
  const urls = fileUrls(s.files as ServerConfig)
  const sanitize = createArticleSanitizer({
    iframeHosts: s.iframeHosts,
    isOwnFile: (url) => urls.keyOf(url) !== null,
    limits: s.limits,
  })
  return (html) => {
    const clean = sanitize(html)
    const found = articleUrls(clean, s.limits)
    const keys: StorageKey[] = []
    for (const url of found.all) {
      const key = urls.keyOf(url)
      if (key !== null) keys.push(key)
    }
    return { html: clean, keys, foreign: [...new Set(found.images.filter(urls.isRemote))] }
  }
}
