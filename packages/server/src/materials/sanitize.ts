import { createRequire } from 'node:module'
import type sanitizeHtml from 'sanitize-html'
import {
  keepDataImagesMatching,
  DROPPED_WITH_CONTENT as SHARED_DROPPED_WITH_CONTENT,
  PLAIN_PROPERTIES as SHARED_PLAIN_PROPERTIES,
  URL_PROPERTIES as SHARED_URL_PROPERTIES,
  styleRules,
} from '../shared/html-allow-list.js'

/**
 * Material HTML is `innerHTML`-ed into the integrator's admin page by the designer and then
 * inserted into articles (docs/security.md, row S37), so it is cleaned on write with an allow-list: layout
 * tags and inline styles stay (typesetting materials live on `style`), anything that can run
 * script, load a document, submit a form, restyle the host page or re-parse differently goes.
 */

const LAYOUT_TAGS = [
  'section',
  'article',
  'header',
  'footer',
  'div',
  'p',
  'span',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'blockquote',
  'pre',
  'code',
  'figure',
  'figcaption',
  'ul',
  'ol',
  'li',
  'dl',
  'dt',
  'dd',
  'table',
  'caption',
  'colgroup',
  'col',
  'thead',
  'tbody',
  'tfoot',
  'tr',
  'th',
  'td',
  'a',
  'img',
  'br',
  'hr',
  'strong',
  'b',
  'em',
  'i',
  'u',
  's',
  'strike',
  'del',
  'ins',
  'sub',
  'sup',
  'small',
  'mark',
]

// Materials keep no frames or plugins at all: `iframe` and `embed` go with whatever they hold.
const DROPPED_WITH_CONTENT = [...SHARED_DROPPED_WITH_CONTENT, 'iframe', 'embed']

const TABLE_CELL = ['colspan', 'rowspan', 'width', 'height', 'valign', 'align']

const ALLOWED_ATTRIBUTES: sanitizeHtml.IOptions['allowedAttributes'] = {
  '*': ['style', 'title', 'align', 'dir', 'lang'],
  a: ['href', 'target', 'rel'],
  img: ['src', 'alt', 'width', 'height'],
  table: ['width', 'border', 'cellpadding', 'cellspacing'],
  col: ['span', 'width'],
  colgroup: ['span', 'width'],
  td: TABLE_CELL,
  th: TABLE_CELL,
  ol: ['start', 'type', 'reversed'],
  li: ['value'],
}

// Designs lay out with more than an article does: flex and gap, transforms, shadows, offsets.
const PLAIN_PROPERTIES = [
  ...SHARED_PLAIN_PROPERTIES,
  'background-clip',
  'background-origin',
  'text-align-last',
  'text-decoration-color',
  'text-decoration-style',
  'writing-mode',
  'border-top-left-radius',
  'border-top-right-radius',
  'border-bottom-right-radius',
  'border-bottom-left-radius',
  'box-shadow',
  'outline',
  'opacity',
  'overflow-x',
  'overflow-y',
  'top',
  'right',
  'bottom',
  'left',
  'transform',
  'transform-origin',
  'flex',
  'flex-direction',
  'flex-wrap',
  'flex-flow',
  'flex-grow',
  'flex-shrink',
  'flex-basis',
  'justify-content',
  'align-items',
  'align-self',
  'align-content',
  'gap',
  'row-gap',
  'column-gap',
  'visibility',
]
const URL_PROPERTIES = [...SHARED_URL_PROPERTIES, 'border-image', 'list-style-image']

const ALLOWED_STYLES = styleRules(PLAIN_PROPERTIES, URL_PROPERTIES, {
  // No `fixed`/`sticky`: a material must not cover the page it is previewed in.
  position: [/^(static|relative|absolute)$/i],
  'z-index': [/^-?\d{1,3}$/],
  display: [
    /^(block|inline|inline-block|flex|inline-flex|grid|inline-grid|table|table-row|table-cell|table-caption|list-item|none)$/i,
  ],
})

const DATA_IMAGE = /^data:image\/(?:png|jpe?g|gif|webp);base64,[A-Za-z0-9+/\s]+=*$/i

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: LAYOUT_TAGS,
  allowedAttributes: ALLOWED_ATTRIBUTES,
  allowedStyles: { '*': ALLOWED_STYLES },
  nonTextTags: DROPPED_WITH_CONTENT,
  disallowedTagsMode: 'discard',
  allowedSchemes: ['http', 'https', 'mailto', 'tel'],
  // Raster data: images only, checked exactly below; they cannot run script inside <img>.
  allowedSchemesByTag: { img: ['http', 'https', 'data'] },
  allowedSchemesAppliedToAttributes: ['href', 'src', 'cite'],
  allowProtocolRelative: true,
  transformTags: {
    a: (tagName, attribs) => {
      const { target, rel: _rel, ...rest } = attribs
      return {
        tagName,
        attribs:
          target === '_blank' ? { ...rest, target, rel: 'noopener noreferrer' } : { ...rest },
      }
    },
    img: keepDataImagesMatching(DATA_IMAGE),
  },
}

// sanitize-html (its parser and postcss with it) loads with the first material written.
let sanitizer: typeof sanitizeHtml | undefined

/** Cleans material HTML; idempotent (cleaning the result again changes nothing). */
export function sanitizeMaterialHtml(html: string): string {
  sanitizer ??= createRequire(import.meta.url)('sanitize-html') as typeof sanitizeHtml
  return containPositioned(sanitizer(html, OPTIONS))
}

// Exactly how sanitize-html writes this element back, so a second pass recognises it.
const FRAME_OPEN = '<div style="position:relative;overflow:hidden">'
const FRAME_CLOSE = '</div>'

/**
 * `position:absolute` is kept (designs place badges and ornaments with it), but a material that
 * uses it is framed in a positioned box that clips, so nothing in it can leave its own area and
 * cover the page or editor it is previewed or inserted in.
 */
function containPositioned(html: string): string {
  if (!/position:\s*absolute/i.test(html) || isFramed(html)) return html
  return `${FRAME_OPEN}${html}${FRAME_CLOSE}`
}

/**
 * Whether `html` is one frame element from start to end. Sanitised output is well formed and
 * escapes `<` in text and attributes, so counting `div` tags finds the frame's own end.
 */
function isFramed(html: string): boolean {
  if (!html.startsWith(FRAME_OPEN) || !html.endsWith(FRAME_CLOSE)) return false
  let depth = 0
  for (const m of html.matchAll(/<(\/?)div\b/gi)) {
    depth += m[1] ? -1 : 1
    if (depth === 0) return m.index === html.length - FRAME_CLOSE.length
  }
  return false
}

/**
 * A thumbnail is shown as an image address by integrators: only http(s) URLs and relative
 * paths, with no whitespace, control characters or backslashes that browsers would strip or
 * reinterpret.
 */
export function isSafeThumbnail(value: string): boolean {
  if (value.length === 0 || value.length > 2048) return false
  if (/[\s\\\p{Cc}<>"'`]/u.test(value)) return false
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(value)
  if (scheme === null) return true
  return /^https?$/i.test(scheme[1] as string) && URL.canParse(value)
}
