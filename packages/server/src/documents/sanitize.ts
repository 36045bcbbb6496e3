import sanitizeHtml from 'sanitize-html'
import { CLASS_NAMES, PLAIN_PROPERTIES, URL_PROPERTIES, WHITE_LIST } from './allow-list.js'

/**
 * The article HTML a host app saves is shown to every reader of its site, and the editor's own
 * filter runs in the author's browser, where anyone can skip it. So the server cleans it with an
 * allow-list (`allow-list.ts`): everything UEditor Plus writes stays, anything that can run
 * script, load a document the reader did not ask for, submit a form or re-parse differently goes.
 */
export interface ArticleSanitizerOptions {
  /** Hosts whose https pages an `iframe` may show; none: every iframe goes. */
  iframeHosts: readonly string[]
  /**
   * Whether a URL names one of this server's stored files. An `embed` stays only then: UEditor's
   * old video mode writes one for the uploaded file, and the server serves its own files with
   * their recorded type and `nosniff`, so the embed shows that file and nothing else.
   */
  isOwnFile(url: string): boolean
}

// Dropped together with their text: raw-text and foreign-content elements whose content would
// otherwise come back as live markup (mXSS through svg, math, style, noscript and the like).
const DROPPED_WITH_CONTENT = [
  'script',
  'style',
  'textarea',
  'option',
  'xmp',
  'noscript',
  'noembed',
  'noframes',
  'frame',
  'frameset',
  'object',
  'applet',
  'template',
  'title',
  'select',
  'svg',
  'math',
  'plaintext',
  'head',
]

// Plain values: letters (CJK font names included), digits and the punctuation of lengths,
// colours and font lists. No `:`, `\`, `;`, `{`, `<`, so no url(), no escapes, no way out of the
// declaration; the look-ahead refuses legacy script-bearing values.
const PLAIN =
  /^(?![\s\S]*(?:expression|javascript|vbscript|behaviou?r|binding|@import))[\p{L}\p{N}\s#%.,+\-/()'"!_*]*$/iu
// As PLAIN, plus `url(…)` whose target is http(s), protocol-relative or relative: a `:` may
// only end `http:` or `https:`.
const WITH_URL =
  /^(?![\s\S]*(?:expression|javascript|vbscript|behaviou?r|binding|@import))(?:https?:|[\p{L}\p{N}\s#%.,+\-/()'"!_*?=&~])*$/iu

const ALLOWED_STYLES: Record<string, RegExp[]> = {
  ...Object.fromEntries(PLAIN_PROPERTIES.map((p) => [p, [PLAIN]])),
  ...Object.fromEntries(URL_PROPERTIES.map((p) => [p, [WITH_URL]])),
  display: [/^(?:block|inline|inline-block|table|table-row|table-cell|list-item|none)$/i],
}

// Raster images only, as the editor pastes them before upload; never SVG (it can hold script
// when opened on its own) and never another type.
const DATA_IMAGE = /^data:image\/(?:png|jpe?g|gif|webp|bmp);base64,[A-Za-z0-9+/\s]+=*$/i

/** The sandbox every kept iframe gets: the player runs, but it cannot navigate the article's page. */
const IFRAME_SANDBOX = 'allow-scripts allow-same-origin allow-presentation allow-popups'

export type ArticleSanitizer = (html: string) => string

/** A cleaner for article HTML; idempotent (cleaning the result again changes nothing). */
export function createArticleSanitizer(o: ArticleSanitizerOptions): ArticleSanitizer {
  const iframeHosts = new Set(o.iframeHosts.map((h) => h.toLowerCase()))
  const options: sanitizeHtml.IOptions = {
    allowedTags: [...Object.keys(WHITE_LIST), 'iframe', 'embed'],
    allowedAttributes: {
      ...Object.fromEntries(Object.entries(WHITE_LIST).map(([tag, attrs]) => [tag, [...attrs]])),
      // The direction buttons write `dir` on the paragraph (or cell, or item) they change.
      '*': ['dir'],
      a: [
        'href',
        'title',
        'class',
        'style',
        'name',
        { name: 'target', multiple: false, values: ['_blank', '_self'] },
        'rel',
      ],
      iframe: [
        'src',
        'width',
        'height',
        'frameborder',
        'allowfullscreen',
        'class',
        'style',
        'sandbox',
        'referrerpolicy',
      ],
      embed: ['src', 'type', 'width', 'height', 'class', 'style'],
    },
    allowedClasses: { '*': [...CLASS_NAMES] },
    allowedStyles: { '*': ALLOWED_STYLES },
    nonTextTags: DROPPED_WITH_CONTENT,
    disallowedTagsMode: 'discard',
    // Void elements are written without an end tag (`<source … />`), as the editor writes them.
    selfClosing: ['img', 'br', 'hr', 'source', 'embed', 'col', 'wbr'],
    allowedSchemes: ['http', 'https', 'mailto', 'tel', 'ftp'],
    allowedSchemesByTag: {
      img: ['http', 'https', 'data'],
      video: ['http', 'https'],
      audio: ['http', 'https'],
      source: ['http', 'https'],
      iframe: ['https'],
      embed: ['http', 'https'],
    },
    allowedSchemesAppliedToAttributes: ['href', 'src', 'cite', 'poster'],
    allowProtocolRelative: true,
    transformTags: {
      a: (tagName, attribs) => {
        const { target, rel: _rel, ...rest } = attribs
        if (target !== '_blank' && target !== '_self') return { tagName, attribs: rest }
        return {
          tagName,
          attribs:
            target === '_blank'
              ? { ...rest, target, rel: 'noopener noreferrer' }
              : { ...rest, target },
        }
      },
      img: (tagName, attribs) => {
        const src = attribs.src ?? ''
        const keep = !/^\s*data:/i.test(src) || DATA_IMAGE.test(src)
        return {
          tagName,
          attribs: Object.fromEntries(Object.entries(attribs).filter(([k]) => keep || k !== 'src')),
        }
      },
      video: (tagName, attribs) => {
        // video.js reads `data-setup` as its options: the editor writes `{}`, nothing else stays.
        const { 'data-setup': setup, ...rest } = attribs
        return { tagName, attribs: setup === '{}' ? { ...rest, 'data-setup': setup } : rest }
      },
      iframe: (tagName, attribs) => ({
        tagName,
        attribs: { ...attribs, sandbox: IFRAME_SANDBOX, referrerpolicy: 'no-referrer' },
      }),
      embed: (tagName, attribs) => {
        const { type, ...rest } = attribs
        // The embed shows the stored file as what it is: no plugin type another handler takes.
        return {
          tagName,
          attribs: type && /^(?:video|audio)\/[a-z0-9.+-]+$/i.test(type) ? { ...rest, type } : rest,
        }
      },
    },
    exclusiveFilter: (frame) => {
      if (frame.tag === 'iframe') return !allowedFrame(frame.attribs.src, iframeHosts)
      if (frame.tag === 'embed') {
        const src = frame.attribs.src
        return src === undefined || !o.isOwnFile(src)
      }
      return false
    },
  }
  return (html) => sanitizeHtml(html, options)
}

/** An https page on one of the hosts, exactly (no user part, no other port). */
function allowedFrame(src: string | undefined, hosts: ReadonlySet<string>): boolean {
  if (src === undefined || hosts.size === 0) return false
  let url: URL
  try {
    url = new URL(src)
  } catch {
    return false
  }
  return (
    url.protocol === 'https:' &&
    url.username === '' &&
    url.password === '' &&
    url.port === '' &&
    hosts.has(url.hostname)
  )
}
