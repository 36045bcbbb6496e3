import sanitizeHtml from 'sanitize-html'
import { UeError } from '../shared/errors.js'
import {
  keepDataImagesMatching,
  DROPPED_WITH_CONTENT as SHARED_DROPPED_WITH_CONTENT,
  styleRules,
} from '../shared/html-allow-list.js'
import {
  CLASS_NAMES,
  PLAIN_PROPERTIES,
  TABLE_SORT,
  URL_PROPERTIES,
  WHITE_LIST,
} from './allow-list.js'

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
  /** How far an article may go before it is refused with UE_DOCUMENT_TOO_COMPLEX. */
  limits: ArticleLimits
}

export interface ArticleLimits {
  /** Elements open inside one another at once, as the HTML parser keeps them. */
  maxDepth: number
  /** Elements in all. */
  maxElements: number
}

/**
 * What a refused `iframe` or `embed` is renamed to at its start tag. It is written out like a
 * kept element, and `withoutRefused` then cuts it out with its content in one pass. The parser
 * lowercases every tag name it reads, so no article can write this one itself; and the cleaner
 * escapes every `<` of text and attribute values and gives it no attributes, so its only form in
 * the output is `<UE-REFUSED>…</UE-REFUSED>`. sanitize-html's own ways are slow or wrong here:
 * `exclusiveFilter` cuts at the end tag by copying all the output written so far (quadratic in
 * the number of iframes), and renaming to a dropped tag leaves the new name behind for the next
 * element at that depth.
 */
const REFUSED = 'UE-REFUSED'
const REFUSED_START = `<${REFUSED}>`
const REFUSED_END = `</${REFUSED}>`

// `iframe` and `embed` are not dropped with their content here: they stay where the options say.
const DROPPED_WITH_CONTENT = [...SHARED_DROPPED_WITH_CONTENT, 'head']

// The attachment dialog writes its file chip as an inline flex box (`display:inline-flex;
// align-items:center` on the link, `flex-grow:1` on the name). A flex box lays out its own
// children and stays where the flow puts it: none of these moves a box out of its place.
const ALLOWED_STYLES = styleRules(PLAIN_PROPERTIES, URL_PROPERTIES, {
  display: [
    /^(?:block|inline|inline-block|flex|inline-flex|table|table-row|table-cell|list-item|none)$/i,
  ],
  'align-items': [/^(?:normal|stretch|center|start|end|flex-start|flex-end|baseline)$/i],
  'flex-grow': [/^\d{1,3}(?:\.\d{1,3})?$/],
})

// Raster images only, as the editor pastes them before upload; never SVG (it can hold script
// when opened on its own) and never another type.
const DATA_IMAGE = /^data:image\/(?:png|jpe?g|gif|webp|bmp);base64,[A-Za-z0-9+/\s]+=*$/i

/** The sandbox every kept iframe gets: the player runs, but it cannot navigate the article's page. */
const IFRAME_SANDBOX = 'allow-scripts allow-same-origin allow-presentation allow-popups'

export type ArticleSanitizer = (html: string) => string

/**
 * A cleaner for article HTML; idempotent (cleaning the result again changes nothing). It throws
 * UE_DOCUMENT_TOO_COMPLEX past the limits: the parser searches its stack of open elements for
 * each end tag, so its work grows with depth × tags, and the limit on depth keeps it linear.
 */
export function createArticleSanitizer(o: ArticleSanitizerOptions): ArticleSanitizer {
  const iframeHosts = new Set(o.iframeHosts.map((h) => h.toLowerCase()))
  const options: sanitizeHtml.IOptions = {
    allowedTags: [...Object.keys(WHITE_LIST), 'iframe', 'embed', REFUSED],
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
      table: (tagName, attribs) => ({
        tagName,
        attribs: Object.fromEntries(
          Object.entries(attribs).filter(
            ([name, value]) =>
              !(name === 'data-sort' || name === 'data-sort-type') ||
              TABLE_SORT[name].includes(value),
          ),
        ),
      }),
      video: (tagName, attribs) => {
        // video.js reads `data-setup` as its options: the editor writes `{}`, nothing else stays.
        const { 'data-setup': setup, ...rest } = attribs
        return { tagName, attribs: setup === '{}' ? { ...rest, 'data-setup': setup } : rest }
      },
      iframe: (tagName, attribs) =>
        allowedFrame(attribs.src, iframeHosts)
          ? {
              tagName,
              attribs: { ...attribs, sandbox: IFRAME_SANDBOX, referrerpolicy: 'no-referrer' },
            }
          : { tagName: REFUSED, attribs: {} },
      embed: (tagName, attribs) => {
        if (attribs.src === undefined || !o.isOwnFile(attribs.src))
          return { tagName: REFUSED, attribs: {} }
        const { type, ...rest } = attribs
        // The embed shows the stored file as what it is: no plugin type another handler takes.
        return {
          tagName,
          attribs: type && /^(?:video|audio)\/[a-z0-9.+-]+$/i.test(type) ? { ...rest, type } : rest,
        }
      },
    },
    // The same checks on the attributes as written out: a `src` the scheme rules removed after
    // the transforms let the start tag through takes the element with it. (The transforms refuse
    // first, so in practice this cuts nothing; a renamed frame keeps its old `tag`.)
    exclusiveFilter: (frame) => {
      if ((frame as { name?: string }).name === REFUSED) return false
      if (frame.tag === 'iframe') return !allowedFrame(frame.attribs.src, iframeHosts)
      if (frame.tag === 'embed') {
        const src = frame.attribs.src
        return src === undefined || !o.isOwnFile(src)
      }
      return false
    },
  }
  return (html) => {
    const bound = boundedTree(o.limits)
    return withoutRefused(
      sanitizeHtml(html, { ...options, onOpenTag: bound.open, onCloseTag: bound.close }),
    )
  }
}

/**
 * The cleaner's output without its refused elements and what they hold, nested ones included.
 * Linear: the text is searched through once for each of the two markers.
 */
function withoutRefused(html: string): string {
  let start = html.indexOf(REFUSED_START)
  if (start === -1) return html
  const parts: string[] = []
  let from = 0
  let end = html.indexOf(REFUSED_END)
  while (start !== -1) {
    parts.push(html.slice(from, start))
    let depth = 1
    let at = start + REFUSED_START.length
    start = html.indexOf(REFUSED_START, at)
    while (depth > 0) {
      while (end !== -1 && end < at) end = html.indexOf(REFUSED_END, at)
      if (end === -1) {
        at = html.length
        break
      }
      if (start !== -1 && start < end) {
        depth++
        at = start + REFUSED_START.length
        start = html.indexOf(REFUSED_START, at)
      } else {
        depth--
        at = end + REFUSED_END.length
      }
    }
    from = at
    while (start !== -1 && start < from) start = html.indexOf(REFUSED_START, from)
  }
  parts.push(html.slice(from))
  return parts.join('')
}

/**
 * Counts the elements the parser opens and closes (it reports every element it closes, implied
 * or not, so the count is the depth of its stack) and throws at the first past a limit.
 */
export function boundedTree(limits: ArticleLimits): { open(): void; close(): void } {
  let depth = 0
  let elements = 0
  return {
    open() {
      depth++
      elements++
      if (depth > limits.maxDepth)
        throw new UeError('UE_DOCUMENT_TOO_COMPLEX', {
          detail: `elements nest more than ${limits.maxDepth} deep`,
        })
      if (elements > limits.maxElements)
        throw new UeError('UE_DOCUMENT_TOO_COMPLEX', {
          detail: `more than ${limits.maxElements} elements`,
        })
    },
    close() {
      depth--
    },
  }
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

/** A kept `embed` in the cleaner's output: where its tag is, and its `src`. */
export interface KeptEmbed {
  start: number
  end: number
  src: string
}

const EMBED_START = '<embed '
const EMBED_SRC = /\ssrc="([^"]*)"/

/**
 * The embeds in HTML the article sanitiser wrote, in one pass. There an embed is only ever
 * `<embed name="value" … />`: every `<` and `>` of text and of attribute values is escaped, and
 * so is every `"` of a value, so the tag ends at the next `>` and ` src="` starts its `src`.
 * The value is unescaped as the sanitiser escaped it (`&`, `<`, `>`, `"`).
 */
export function keptEmbeds(html: string): KeptEmbed[] {
  const embeds: KeptEmbed[] = []
  let start = html.indexOf(EMBED_START)
  while (start !== -1) {
    const close = html.indexOf('>', start)
    const end = close === -1 ? html.length : close + 1
    const raw = EMBED_SRC.exec(html.slice(start, end))?.[1] ?? ''
    const src = raw
      .replaceAll('&lt;', '<')
      .replaceAll('&gt;', '>')
      .replaceAll('&quot;', '"')
      .replaceAll('&amp;', '&')
    embeds.push({ start, end, src })
    start = html.indexOf(EMBED_START, end)
  }
  return embeds
}
