/**
 * What the two HTML sanitisers (materials and articles) share: each builds its sanitize-html
 * options from these and adds only its own differences on top.
 */

/**
 * Dropped together with their text: raw-text and foreign-content elements whose content would
 * otherwise come back as live markup (mXSS through svg, math, style, noscript and the like).
 */
export const DROPPED_WITH_CONTENT: readonly string[] = [
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
]

/**
 * Plain CSS values: letters (CJK font names included), digits and the punctuation of lengths,
 * colours, gradients and font lists. No `:`, `\`, `;`, `{`, `<`, so no url(), no escapes, no way
 * out of the declaration; the look-ahead refuses legacy script-bearing values.
 */
export const PLAIN_CSS_VALUE =
  /^(?![\s\S]*(?:expression|javascript|vbscript|behaviou?r|binding|@import))[\p{L}\p{N}\s#%.,+\-/()'"!_*]*$/iu

/**
 * As PLAIN_CSS_VALUE, plus `url(…)` whose target is http(s), protocol-relative or relative: a
 * `:` may only end `http:` or `https:`, or start a port (`//127.0.0.1:8080/…`).
 */
export const CSS_VALUE_WITH_URL =
  /^(?![\s\S]*(?:expression|javascript|vbscript|behaviou?r|binding|@import))(?:https?:|:\d{1,5}|[\p{L}\p{N}\s#%.,+\-/()'"!_*?=&~])*$/iu

/** CSS properties with plain values that both sanitisers keep. */
export const PLAIN_PROPERTIES: readonly string[] = [
  'color',
  'background-color',
  'background-position',
  'background-repeat',
  'background-size',
  'font',
  'font-family',
  'font-size',
  'font-style',
  'font-variant',
  'font-weight',
  'letter-spacing',
  'line-height',
  'word-spacing',
  'text-align',
  'text-decoration',
  'text-decoration-line',
  'text-indent',
  'text-shadow',
  'text-transform',
  'white-space',
  'word-break',
  'word-wrap',
  'overflow-wrap',
  'vertical-align',
  'margin',
  'margin-top',
  'margin-right',
  'margin-bottom',
  'margin-left',
  'padding',
  'padding-top',
  'padding-right',
  'padding-bottom',
  'padding-left',
  'border',
  'border-top',
  'border-right',
  'border-bottom',
  'border-left',
  'border-width',
  'border-style',
  'border-color',
  'border-top-width',
  'border-right-width',
  'border-bottom-width',
  'border-left-width',
  'border-top-style',
  'border-right-style',
  'border-bottom-style',
  'border-left-style',
  'border-top-color',
  'border-right-color',
  'border-bottom-color',
  'border-left-color',
  'border-radius',
  'border-collapse',
  'border-spacing',
  'width',
  'height',
  'min-width',
  'min-height',
  'max-width',
  'max-height',
  'float',
  'clear',
  'list-style',
  'list-style-type',
  'list-style-position',
  'table-layout',
  'box-sizing',
  'overflow',
  'caption-side',
]

/** CSS properties that may hold `url(…)` (an http(s) or relative address) in both sanitisers. */
export const URL_PROPERTIES: readonly string[] = ['background', 'background-image']

/** A length or percentage that is not negative, written plainly: no calc(), var() or min(). */
const LENGTH = String.raw`(?:0|\+?(?:\d{1,6}(?:\.\d{1,6})?|\.\d{1,6})(?:px|em|rem|ex|ch|pt|pc|cm|mm|in|q|vw|vh|vmin|vmax|%)?)`
const MARGIN = `(?:${LENGTH}|auto)`

/**
 * Narrower values for the plain properties that could move a box away from where the flow puts
 * it, out of the fragment and over the page it is shown in: a negative margin (any unit, or
 * through calc(), var(), min(), max(), in the shorthand too), a negative first-line indent,
 * negative letter or word spacing (text running backwards), and a list marker of any text
 * (`list-style-type: "…"`, drawn outside the item). `position`, `top`/`left`/…, `inset`,
 * `transform`, `translate`, `rotate`, `scale` and `z-index` are in neither shared list.
 */
const IN_PLACE: Record<string, RegExp[]> = {
  margin: [new RegExp(`^${MARGIN}(?:\\s+${MARGIN}){0,3}$`, 'i')],
  ...Object.fromEntries(
    ['margin-top', 'margin-right', 'margin-bottom', 'margin-left'].map((p) => [
      p,
      [new RegExp(`^${MARGIN}$`, 'i')],
    ]),
  ),
  'text-indent': [new RegExp(`^${LENGTH}(?:\\s+(?:hanging|each-line)){0,2}$`, 'i')],
  'letter-spacing': [new RegExp(`^(?:normal|${LENGTH})$`, 'i')],
  'word-spacing': [new RegExp(`^(?:normal|${LENGTH})$`, 'i')],
  'list-style-type': [/^[a-z][a-z-]{0,40}$/i],
  'list-style': [/^[a-z][a-z-]{0,40}(?:\s+[a-z][a-z-]{0,40}){0,2}$/i],
}

/**
 * sanitize-html's `allowedStyles` rules: each plain property takes PLAIN_CSS_VALUE (or its
 * IN_PLACE rule), each URL property CSS_VALUE_WITH_URL, and `own` adds the properties with a
 * narrower rule of their own.
 */
export function styleRules(
  plain: readonly string[],
  withUrl: readonly string[],
  own: Record<string, RegExp[]>,
): Record<string, RegExp[]> {
  return {
    ...Object.fromEntries(plain.map((p) => [p, IN_PLACE[p] ?? [PLAIN_CSS_VALUE]])),
    ...Object.fromEntries(withUrl.map((p) => [p, [CSS_VALUE_WITH_URL]])),
    ...own,
  }
}

/**
 * The `img` transform: a `data:` source stays only when it matches `dataImage` (the raster types
 * the editor pastes before upload); any other `data:` source is dropped, the image's other
 * attributes stay.
 */
export function keepDataImagesMatching(
  dataImage: RegExp,
): (
  tagName: string,
  attribs: Record<string, string>,
) => { tagName: string; attribs: Record<string, string> } {
  return (tagName, attribs) => {
    const src = attribs.src ?? ''
    const keep = !/^\s*data:/i.test(src) || dataImage.test(src)
    return {
      tagName,
      attribs: Object.fromEntries(Object.entries(attribs).filter(([k]) => keep || k !== 'src')),
    }
  }
}
