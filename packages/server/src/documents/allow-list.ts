import {
  PLAIN_PROPERTIES as SHARED_PLAIN_PROPERTIES,
  URL_PROPERTIES as SHARED_URL_PROPERTIES,
} from '../shared/html-allow-list.js'

/**
 * The tags and attributes an article keeps. The start is UEditor's own `whitList`, the
 * allow-list its `ueditor.config.js` has shipped since 1.4.3 and early UEditor Plus releases kept
 * (it was taken from the default list of the js-xss library). Changed from it, in plain words:
 *
 * - added what UEditor Plus itself writes and the list lacks: `dir` (the direction buttons), the
 *   sorting marks of tables (`TABLE_SORT`), `source` inside `video` and
 *   `audio`, `data-*` on images (the formula dialog writes `data-formula-image`, the LaTeX
 *   plugin `data-latex`), `poster`/`muted` on video, `summary` for `details`, `strike`,
 *   `figure`/`figcaption`, the `brush:…` class of code blocks and the `pagebreak` rule;
 * - removed `id` (an element id in the host page can shadow the page's own script globals),
 *   `_src` and `loadingclass` (the editor's own working attributes, never meant for readers),
 *   and `area` (an image map needs `map`, which the list never had);
 * - `iframe` and `embed` are not in the list: they stay only where `sanitize.ts` says.
 */
export const WHITE_LIST: Readonly<Record<string, readonly string[]>> = {
  a: ['target', 'href', 'title', 'class', 'style', 'name'],
  abbr: ['title', 'class', 'style'],
  address: ['class', 'style'],
  article: [],
  aside: [],
  audio: ['autoplay', 'controls', 'loop', 'muted', 'preload', 'src', 'class', 'style'],
  b: ['class', 'style'],
  bdi: ['dir'],
  bdo: ['dir'],
  big: [],
  blockquote: ['cite', 'class', 'style'],
  br: [],
  caption: ['class', 'style'],
  center: [],
  cite: [],
  code: ['class', 'style'],
  col: ['align', 'valign', 'span', 'width', 'class', 'style'],
  colgroup: ['align', 'valign', 'span', 'width', 'class', 'style'],
  dd: ['class', 'style'],
  del: ['datetime'],
  details: ['open'],
  div: ['class', 'style'],
  dl: ['class', 'style'],
  dt: ['class', 'style'],
  em: ['class', 'style'],
  figcaption: ['class', 'style'],
  figure: ['class', 'style'],
  font: ['color', 'size', 'face'],
  footer: [],
  h1: ['class', 'style'],
  h2: ['class', 'style'],
  h3: ['class', 'style'],
  h4: ['class', 'style'],
  h5: ['class', 'style'],
  h6: ['class', 'style'],
  header: [],
  hr: ['class', 'style', 'noshade', 'size'],
  i: ['class', 'style'],
  img: [
    'src',
    'srcset',
    'alt',
    'title',
    'width',
    'height',
    'class',
    'style',
    'align',
    'border',
    'data-*',
  ],
  ins: ['datetime'],
  li: ['class', 'style'],
  mark: [],
  nav: [],
  ol: ['class', 'style', 'start', 'type'],
  p: ['class', 'style', 'align'],
  pre: ['class', 'style'],
  s: [],
  section: [],
  small: [],
  source: ['src', 'type'],
  span: ['class', 'style'],
  strike: [],
  strong: ['class', 'style'],
  sub: ['class', 'style'],
  summary: [],
  sup: ['class', 'style'],
  table: [
    'width',
    'border',
    'align',
    'valign',
    'class',
    'style',
    'cellpadding',
    'cellspacing',
    'data-sort',
    'data-sort-type',
  ],
  tbody: ['align', 'valign', 'class', 'style'],
  td: ['width', 'height', 'rowspan', 'colspan', 'align', 'valign', 'class', 'style'],
  tfoot: ['align', 'valign', 'class', 'style'],
  th: ['width', 'height', 'rowspan', 'colspan', 'align', 'valign', 'class', 'style'],
  thead: ['align', 'valign', 'class', 'style'],
  tr: ['rowspan', 'align', 'valign', 'class', 'style'],
  tt: [],
  u: [],
  ul: ['class', 'style'],
  video: [
    'autoplay',
    'controls',
    'loop',
    'muted',
    'preload',
    'src',
    'poster',
    'height',
    'width',
    'class',
    'style',
    'data-setup',
  ],
}

/**
 * The values the table menu's sorting writes on a table, and UEditor Plus's `uParse` reads to let
 * readers sort it: `data-sort` (sorting on or off) and `data-sort-type` (the last order chosen).
 * Any other value of either goes.
 */
export const TABLE_SORT: Readonly<Record<'data-sort' | 'data-sort-type', readonly string[]>> = {
  'data-sort': ['sortEnabled', 'sortDisabled'],
  'data-sort-type': [
    '',
    'orderbyasc',
    'reversebyasc',
    'orderbynum',
    'reversebynum',
    'reversecurrent',
  ],
}

/**
 * Class names an article keeps: the ones UEditor Plus writes (`edui-…` for video, audio and
 * formulas, `ue-…`, `firstRow` and `sortEnabled` for tables, `list-…` for list styles, `brush:…` for code
 * blocks, `pagebreak`, `anchor`). Others go: in the host page they would pick up the page's own
 * styles (an overlay, a hidden modal).
 */
export const CLASS_NAMES: readonly RegExp[] = [
  /^edui-[a-z0-9-]{1,40}$/,
  /^ue-[a-z0-9-]{1,40}$/,
  /^list-[a-z0-9-]{1,40}$/,
  /^(?:firstRow|sortEnabled)$/,
  /^brush:[a-z0-9#+-]{1,20}(?:;[a-z-]{1,20}:[a-z0-9-]{1,20}){0,4};?$/i,
  /^(?:pagebreak|anchor|anchorclass)$/,
]

/** CSS properties with plain values: the shared ones plus the direction buttons' and a few more. */
export const PLAIN_PROPERTIES: readonly string[] = [
  ...SHARED_PLAIN_PROPERTIES,
  'direction',
  'unicode-bidi',
  'empty-cells',
  '-webkit-user-select',
  'user-select',
]

/** CSS properties that may hold `url(…)` (an http(s) or relative address): the shared ones only. */
export const URL_PROPERTIES: readonly string[] = SHARED_URL_PROPERTIES
