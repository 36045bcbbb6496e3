import type { ServerConfig } from '../config/load.js'
import { UeError } from '../shared/errors.js'
import { safeJson } from '../shared/respond.js'
import type { StorageKey } from '../shared/types.js'
import { articleUrls } from './article-urls.js'
import { fileUrls } from './file-urls.js'
import { type ArticleLimits, createArticleSanitizer } from './sanitize.js'

/** What cleaning needs, as plain data: it is handed to worker threads. */
export interface CleanSettings {
  /** `documents.iframeHosts`. */
  iframeHosts: string[]
  limits: ArticleLimits
  /**
   * For `fileUrls`, which says which URLs are this server's stored files: the whole config, so
   * the worker reads it as the event loop's code does, whatever parts that takes.
   */
  config: ServerConfig
}

/** The body of a save as it arrived: UTF-8 bytes of the HTML, or of JSON `{"html": "…"}`. */
export interface ArticleBody {
  bytes: Uint8Array
  json: boolean
}

/** A cleaned article and what it uses. */
export interface CleanArticle {
  html: string
  /** Keys of this server's stored files it references, as found (repeats possible). */
  keys: StorageKey[]
  /** Remote (http or https) images still in it, as written, each once. */
  foreign: string[]
}

/** As a worker hands a cleaned article back: the long parts already written as answer JSON. */
export interface CleanedArticle {
  /** The cleaned HTML as a JSON string (`safeJson`). */
  htmlJson: string
  keys: StorageKey[]
  foreign: string[]
  /** `foreign` as JSON (`safeJson`). */
  foreignJson: string
}

export function cleanSettings(config: ServerConfig): CleanSettings {
  const { documents } = config
  return {
    iframeHosts: [...documents.iframeHosts],
    limits: { maxDepth: documents.maxDepth, maxElements: documents.maxElements },
    config,
  }
}

/**
 * The whole work of a save that depends on the article alone: read the body, clean the HTML,
 * then read the addresses out of the cleaned HTML, and write what the answer carries as JSON.
 * Each step is one pass over the text. An article past the limits is refused with
 * UE_DOCUMENT_TOO_COMPLEX, a body that is not UTF-8 or not the JSON shape with UE_BODY_INVALID
 * or UE_VALIDATION_FAILED.
 */
export function createBodyCleaner(s: CleanSettings): (body: ArticleBody) => CleanedArticle {
  const clean = createArticleCleaner(s)
  return (body) => {
    const article = clean(articleText(body))
    return {
      htmlJson: safeJson(article.html),
      keys: article.keys,
      foreign: article.foreign,
      foreignJson: safeJson(article.foreign),
    }
  }
}

/** Cleans HTML and finds the stored files and remote images it uses. */
export function createArticleCleaner(s: CleanSettings): (html: string) => CleanArticle {
  const urls = fileUrls(s.config)
  const sanitize = createArticleSanitizer({
    iframeHosts: s.iframeHosts,
    isOwnFile: urls.isOwnFile,
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

/** The HTML of a body. */
function articleText(body: ArticleBody): string {
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(body.bytes)
  } catch {
    throw new UeError('UE_BODY_INVALID', { detail: 'the body is not UTF-8' })
  }
  if (!body.json) return text
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new UeError('UE_BODY_INVALID', { detail: 'not valid JSON' })
  }
  const html = (value as { html?: unknown } | null)?.html
  if (typeof value !== 'object' || Array.isArray(value) || typeof html !== 'string')
    throw new UeError('UE_VALIDATION_FAILED', { detail: 'the body must be {"html": "<string>"}' })
  return html
}
