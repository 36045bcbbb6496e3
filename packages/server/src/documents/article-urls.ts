import sanitizeHtml from 'sanitize-html'
import { type ArticleLimits, boundedTree } from './sanitize.js'

/** The addresses an article uses, as written in it. */
export interface ArticleUrls {
  /** Every address of a file it shows or links to: images, video, audio, links, embeds, CSS. */
  all: string[]
  /** Of those, the ones of images (`img`, `srcset`, CSS `url()`): `foreign` comes from these. */
  images: string[]
}

const CSS_URL = /url\(\s*(['"]?)([^'")]*)\1\s*\)/gi

/**
 * Reads the addresses out of HTML the article sanitiser wrote (every element there is kept). It
 * only listens to the parser's start tags, in one pass: it keeps no tag, so nothing is written
 * back, and nothing `sanitize-html` would warn about is allowed.
 */
export function articleUrls(html: string, limits: ArticleLimits): ArticleUrls {
  const all: string[] = []
  const images: string[] = []
  const add = (url: string | undefined, image = false) => {
    const value = url?.trim()
    if (!value) return
    all.push(value)
    if (image) images.push(value)
  }
  const bound = boundedTree(limits)
  sanitizeHtml(html, {
    allowedTags: [],
    allowedAttributes: {},
    nonTextTags: [],
    // No text is written back either: it is not even escaped.
    disallowedTagsMode: 'completelyDiscard',
    onCloseTag: bound.close,
    onOpenTag: (tag, attribs) => {
      bound.open()
      switch (tag) {
        case 'img':
          add(attribs.src, true)
          for (const candidate of srcsetUrls(attribs.srcset)) add(candidate, true)
          break
        case 'video':
          add(attribs.src)
          add(attribs.poster, true)
          break
        case 'audio':
        case 'source':
        case 'embed':
        case 'iframe':
          add(attribs.src)
          break
        case 'a':
          add(attribs.href)
          break
      }
      for (const m of (attribs.style ?? '').matchAll(CSS_URL)) add(m[2], true)
    },
  })
  return { all, images }
}

/** The addresses of a `srcset`: each candidate is an address and an optional descriptor. */
function srcsetUrls(srcset: string | undefined): string[] {
  if (!srcset) return []
  return srcset
    .split(/,\s+/)
    .map((candidate) => candidate.trim().split(/\s+/)[0] ?? '')
    .filter((url) => url !== '')
}
