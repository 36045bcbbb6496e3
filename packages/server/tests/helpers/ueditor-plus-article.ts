/**
 * What UEditor Plus 4.5's `getContent()` hands a host app for each toolbar feature, as its
 * plugins write it (the attachment chip is `insertfile`'s markup, the sorting marks the table
 * menu's `enablesort`/`disablesort` and `sorttable`): headings and paragraph formats, bold/italic/underline/strike/super/sub, the
 * character border, colours, font family and size, line height and paragraph spacing,
 * indentation, alignment and direction, quotes, ordered and unordered lists of each style,
 * links and anchors, images (uploaded, floated, scaled, emoticon, scrawl, pasted as data),
 * video (uploaded) and audio, an attachment chip, a formula from this server and one from the
 * formula service, a code block, a page break, a horizontal rule, a table with merged cells,
 * a caption and interlaced colours, sortable tables, a custom style span, date, time and special
 * characters. `/uploads/…` files are this server's; the emoticon and the formula service are
 * remote.
 */
export const UEDITOR_PLUS_FEATURES: readonly (readonly [feature: string, html: string])[] = [
  ['heading', '<h1 style="text-align: center;">2026 年度报告</h1>'],
  [
    'heading with border and spacing',
    '<h2 style="border-bottom: 2px solid #ccc; padding: 0 4px 0 0; margin: 0 0 10px 0;">一、概述</h2>',
  ],
  [
    'paragraph formats: font, size, bold, italic, underline, strike, character border, super and subscript',
    '<p style="text-indent: 2em; line-height: 1.75; margin-top: 10px; margin-bottom: 10px;"><span style="font-family: 微软雅黑, &quot;Microsoft YaHei&quot;; font-size: 16px;">本报告由</span><strong>编辑部</strong><em>整理</em>，<span style="text-decoration: underline;">下划线</span>、<span style="text-decoration: line-through;">删除线</span>、<span style="border: 1px solid #000000;">字符边框</span>、x<sup>2</sup>、H<sub>2</sub>O。</p>',
  ],
  [
    'colours, letter spacing, case',
    '<p><span style="color: #ff0000;">红色文字</span><span style="background-color: #ffff00;">黄色背景</span><span style="letter-spacing: 2px;">字间距</span><span style="text-transform: uppercase;">upper</span></p>',
  ],
  [
    'justify and indent',
    '<p style="text-align: justify; padding-left: 2em;">两端对齐并缩进的段落。</p>',
  ],
  [
    'direction right to left',
    '<p dir="rtl" style="text-align: right; direction: rtl;">从右到左</p>',
  ],
  ['quote', '<blockquote><p>引用的一段话。</p></blockquote>'],
  [
    'ordered list (decimal)',
    '<ol class=" list-paddingleft-2" style="list-style-type: decimal;"><li><p>第一项</p></li><li><p>第二项</p></li></ol>',
  ],
  [
    'ordered list (lower-alpha)',
    '<ol style="list-style-type: lower-alpha;" class=" list-paddingleft-2"><li><p>a 项</p></li></ol>',
  ],
  [
    'unordered list (square)',
    '<ul class=" list-paddingleft-2" style="list-style-type: square;"><li><p>方块</p></li><li><p>另一项</p></li></ul>',
  ],
  [
    'links and anchor',
    '<p><a href="https://www.example.com/report" target="_blank" title="年度报告">外部链接</a> <a href="/about" target="_self">站内链接</a> <a href="mailto:editor@example.com">写信</a> <a name="section-2" class="anchor"></a></p>',
  ],
  [
    'image, uploaded and scaled',
    '<p style="text-align: center;"><img src="/uploads/image/20261126/1764139200123-k3j9x2.png" title="cover.png" alt="cover.png" width="640" height="360" style="width: 640px; height: 360px;"/></p>',
  ],
  [
    'image floated left',
    '<p><img src="/uploads/image/20261126/1764139200456-p0q1r2.jpg" style="float: left; margin: 0 10px 0 0;" title="photo.jpg" alt="photo.jpg" width="200" height="150" border="0"/>左浮动图片旁的文字。</p>',
  ],
  ['emoticon', '<p><img src="http://img.baidu.com/hi/jx2/j_0002.gif"/> 表情</p>'],
  [
    'scrawl',
    '<p><img src="/uploads/scrawl/20261126/1764139200789-s7t8u9.png" title="scrawl" alt="scrawl"/></p>',
  ],
  [
    'image pasted as data',
    '<p><img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="/></p>',
  ],
  [
    'video, uploaded',
    '<p><video class="edui-video-video" controls="" preload="none" width="420" height="280" src="/uploads/video/20261126/1764139201000-v1d2e3.mp4" data-setup="{}" id="tmpVideo0"><source src="/uploads/video/20261126/1764139201000-v1d2e3.mp4" type="video/mp4"/></video></p>',
  ],
  [
    'audio',
    '<p><audio class="edui-audio-audio" controls=""><source src="/uploads/audio/20261126/1764139202000-a4b5c6.mp3" type="audio/mpeg"/></audio></p>',
  ],
  [
    "attachment (the attachment dialog's file chip)",
    '<p><a style="background:#EEE;padding:10px;border-radius:5px;line-height:1.5em;display:inline-flex;align-items:center;" href="/uploads/file/20261126/1764139203000-f7g8h9.pdf" title="report.pdf" target="_blank"><img style="vertical-align:middle;margin-right:0.5em;height:1.5em;" src="/ueditor-plus/themes/default/exts/pdf.svg"/><span style="color:#111111;line-height:1.5em;flex-grow:1;">report.pdf</span></a></p>',
  ],
  [
    'formulas',
    '<p><img src="/formula.svg?%5Cfrac%7B1%7D%7B2%7D" data-formula-image="%5Cfrac%7B1%7D%7B2%7D"/> 与 <img src="https://r.latexeasy.com/image.svg?E%3Dmc%5E2" data-formula-image="E%3Dmc%5E2"/></p>',
  ],
  [
    'code block',
    '<pre class="brush:js;toolbar:false">function add(a, b) {\n  return a &lt; b ? b : a;\n}</pre>',
  ],
  [
    'page break',
    '<hr class="pagebreak" noshade="noshade" size="5" style="-webkit-user-select: none;"/>',
  ],
  ['paragraph after a page break', '<p>分页后的内容</p>'],
  ['horizontal rule', '<hr/>'],
  [
    'table with merged cells, caption and interlaced colours',
    '<table width="100%" border="1" style="border-collapse: collapse;" class="ue-table-interlace-color-single"><caption>季度数据</caption><tbody><tr class="firstRow"><th width="120" valign="middle" style="border-color: #ddd; background-color: #f2f2f2;">季度</th><th width="120" valign="middle">收入</th><th valign="middle">备注</th></tr><tr><td width="120" valign="top" style="word-break: break-all;">Q1</td><td width="120" valign="top" align="right">1,200</td><td rowspan="2" valign="middle" style="text-align: center;">合并单元格</td></tr><tr><td colspan="2" valign="top">Q2 与 Q3 合计</td></tr></tbody></table>',
  ],
  [
    'table with sorting enabled, sorted by number',
    '<table data-sort="sortEnabled" data-sort-type="orderbynum" class="sortEnabled"><tbody><tr class="firstRow"><th>城市</th><th>人口</th></tr><tr><td width="120" valign="top">乙</td><td width="120" valign="top">2</td></tr><tr><td width="120" valign="top">甲</td><td width="120" valign="top">10</td></tr></tbody></table>',
  ],
  [
    'table with sorting turned off again',
    '<table data-sort="sortDisabled" data-sort-type=""><tbody><tr class="firstRow"><td width="120" valign="top">a</td></tr></tbody></table>',
  ],
  [
    'custom style',
    '<p><span style="font-style: italic; font-weight: bold; color: rgb(51, 153, 204);">自定义样式</span></p>',
  ],
  ['date, time and special characters', '<p>2026-11-26 14:30:00 ©®™ ≈ ≠ ∑ →</p>'],
  [
    'image with srcset and data-latex',
    '<p style="text-align: center;"><img src="/uploads/image/20261126/1764139204000-w1x2y3.webp" srcset="/uploads/image/20261126/1764139204000-w1x2y3.webp 1x" alt="" data-latex="" width="100%"/></p>',
  ],
]

/** The whole article: every feature above, one after another. */
export const UEDITOR_PLUS_ARTICLE = UEDITOR_PLUS_FEATURES.map(([, html]) => html).join('')

/**
 * What the cleaning changes in it, and nothing else: `id` goes (an element id can shadow the
 * host page's globals) and a `target="_blank"` link gets `rel="noopener noreferrer"`.
 */
export const DOCUMENTED_CHANGES = ['id removed', 'rel added'] as const
