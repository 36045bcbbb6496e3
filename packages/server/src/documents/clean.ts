import type { ServerConfig } from '../config/load.js'
import { UeError } from '../shared/errors.js'
import { jsonOfBytes } from '../shared/json-body.js'
import { isPlainObject } from '../shared/plain-object.js'
import { safeJson } from '../shared/respond.js'
import type { StorageKey } from '../shared/types.js'
import { articleUrls } from './article-urls.js'
import { fileUrls } from './file-urls.js'
import { type ArticleLimits, createArticleSanitizer, keptEmbeds } from './sanitize.js'

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
  /** Its embeds, in order: where each is in `html`, and the key of the stored file it shows. */
  embeds: EmbedOf[]
}

/**
 * An embed the cleaner kept, as its `src` names a stored file of this server; `start` and `end`
 * are offsets into the HTML (or into its JSON). Whether the index holds that file is known only
 * at the save, which drops the embed when it does not (`withStoredEmbeds`).
 */
export interface EmbedOf {
  key: StorageKey | null
  start: number
  end: number
}

/** As a worker hands a cleaned article back: the long parts already written as answer JSON. */
export interface CleanedArticle {
  /** The cleaned HTML as a JSON string (`safeJson`). */
  htmlJson: string
  keys: StorageKey[]
  foreign: string[]
  /** `foreign` as JSON (`safeJson`). */
  foreignJson: string
  /** The article's embeds, with their offsets into `htmlJson`. */
  embeds: EmbedOf[]
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
      ...htmlAsJson(article),
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
    const embeds = keptEmbeds(clean).map(({ start, end, src }) => ({
      key: urls.ownFileKey(src),
      start,
      end,
    }))
    return {
      html: clean,
      keys,
      foreign: [...new Set(found.images.filter(urls.isRemote))],
      embeds,
    }
  }
}

/**
 * The HTML as a JSON string (`safeJson`), and its embeds' offsets in it. JSON escapes each
 * character on its own, and an embed starts at a `<` and ends after a `>`, so the JSON of the
 * whole is the JSON of its pieces joined, and the offsets are counted piece by piece.
 */
function htmlAsJson(article: CleanArticle): { htmlJson: string; embeds: EmbedOf[] } {
  if (article.embeds.length === 0) return { htmlJson: safeJson(article.html), embeds: [] }
  const inner = (text: string) => safeJson(text).slice(1, -1)
  const parts = ['"']
  let length = 1
  let from = 0
  const embeds: EmbedOf[] = []
  for (const embed of article.embeds) {
    const before = inner(article.html.slice(from, embed.start))
    const tag = inner(article.html.slice(embed.start, embed.end))
    parts.push(before, tag)
    embeds.push({
      key: embed.key,
      start: length + before.length,
      end: length + before.length + tag.length,
    })
    length += before.length + tag.length
    from = embed.end
  }
  parts.push(inner(article.html.slice(from)), '"')
  return { htmlJson: parts.join(''), embeds }
}

/**
 * The article's HTML (as JSON) without the embeds whose stored file the index does not hold,
 * in one pass: an embed stays only for a file this server actually serves.
 */
export function withStoredEmbeds(
  htmlJson: string,
  embeds: readonly EmbedOf[],
  stored: ReadonlySet<StorageKey>,
): string {
  const gone = embeds.filter((e) => e.key === null || !stored.has(e.key))
  if (gone.length === 0) return htmlJson
  const parts: string[] = []
  let from = 0
  for (const embed of gone) {
    parts.push(htmlJson.slice(from, embed.start))
    from = embed.end
  }
  parts.push(htmlJson.slice(from))
  return parts.join('')
}

/** The HTML of a body: the raw text, or the `html` of a JSON body, read by the JSON routes' rules. */
function articleText(body: ArticleBody): string {
  if (body.json) {
    const value = jsonOfBytes(body.bytes)
    const html = isPlainObject(value) ? value.html : undefined
    if (typeof html !== 'string')
      throw new UeError('UE_VALIDATION_FAILED', { detail: 'the body must be {"html": "<string>"}' })
    return html
  }
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(body.bytes)
  } catch {
    throw new UeError('UE_BODY_INVALID', { detail: 'the body is not UTF-8' })
  }
}
