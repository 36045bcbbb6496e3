import sanitizeHtml from 'sanitize-html'
import {
  keepDataImagesMatching,
  DROPPED_WITH_CONTENT as SHARED_DROPPED_WITH_CONTENT,
  styleRules,
} from '../shared/html-allow-list.js'
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

// `iframe` and `embed` are not dropped with their content here: they stay where the options say.
const DROPPED_WITH_CONTENT = [...SHARED_DROPPED_WITH_CONTENT, 'head']

const ALLOWED_STYLES = styleRules(PLAIN_PROPERTIES, URL_PROPERTIES, {
  display: [/^(?:block|inline|inline-block|table|table-row|table-cell|list-item|none)$/i],
})

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
      img: keepDataImagesMatching(DATA_IMAGE),
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
