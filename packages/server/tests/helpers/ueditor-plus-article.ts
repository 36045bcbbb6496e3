/**
 * An article as UEditor Plus's `getContent()` hands it to a host app, made of what each toolbar
 * feature writes: headings and paragraph formats, bold/italic/underline/strike/super/sub, the
 * character border, colours, font family and size, line height and paragraph spacing,
 * indentation, alignment and direction, quotes, ordered and unordered lists of each style,
 * links and anchors, images (uploaded, floated, scaled, emoticon, scrawl, pasted as data),
 * video (uploaded) and audio, an attachment line, a formula from this server and one from the
 * formula service, a code block, a page break, a horizontal rule, a table with merged cells,
 * a caption and interlaced colours, a custom style span, date, time and special characters.
 * `/uploads/…` files are this server's; the emoticon and the formula service are remote.
 */
export const UEDITOR_PLUS_ARTICLE = [
  '<h1 style="text-align: center;">2026 年度报告</h1>',
  '<h2 style="border-bottom: 2px solid #ccc; padding: 0 4px 0 0; margin: 0 0 10px 0;">一、概述</h2>',
  '<p style="text-indent: 2em; line-height: 1.75; margin-top: 10px; margin-bottom: 10px;"><span style="font-family: 微软雅黑, &quot;Microsoft YaHei&quot;; font-size: 16px;">本报告由</span><strong>编辑部</strong><em>整理</em>，<span style="text-decoration: underline;">下划线</span>、<span style="text-decoration: line-through;">删除线</span>、<span style="border: 1px solid #000000;">字符边框</span>、x<sup>2</sup>、H<sub>2</sub>O。</p>',
  '<p><span style="color: #ff0000;">红色文字</span><span style="background-color: #ffff00;">黄色背景</span><span style="letter-spacing: 2px;">字间距</span><span style="text-transform: uppercase;">upper</span></p>',
  '<p style="text-align: justify; padding-left: 2em;">两端对齐并缩进的段落。</p>',
  '<p dir="rtl" style="text-align: right; direction: rtl;">从右到左</p>',
  '<blockquote><p>引用的一段话。</p></blockquote>',
  '<ol class=" list-paddingleft-2" style="list-style-type: decimal;"><li><p>第一项</p></li><li><p>第二项</p></li></ol>',
  '<ol style="list-style-type: lower-alpha;" class=" list-paddingleft-2"><li><p>a 项</p></li></ol>',
  '<ul class=" list-paddingleft-2" style="list-style-type: square;"><li><p>方块</p></li><li><p>另一项</p></li></ul>',
  '<p><a href="https://www.example.com/report" target="_blank" title="年度报告">外部链接</a> <a href="/about" target="_self">站内链接</a> <a href="mailto:editor@example.com">写信</a> <a name="section-2" class="anchor"></a></p>',
  '<p style="text-align: center;"><img src="/uploads/image/20261126/1764139200123-k3j9x2.png" title="cover.png" alt="cover.png" width="640" height="360" style="width: 640px; height: 360px;"/></p>',
  '<p><img src="/uploads/image/20261126/1764139200456-p0q1r2.jpg" style="float: left; margin: 0 10px 0 0;" title="photo.jpg" alt="photo.jpg" width="200" height="150" border="0"/>左浮动图片旁的文字。</p>',
  '<p><img src="http://img.baidu.com/hi/jx2/j_0002.gif"/> 表情</p>',
  '<p><img src="/uploads/scrawl/20261126/1764139200789-s7t8u9.png" title="scrawl" alt="scrawl"/></p>',
  '<p><img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="/></p>',
  '<p><video class="edui-video-video" controls="" preload="none" width="420" height="280" src="/uploads/video/20261126/1764139201000-v1d2e3.mp4" data-setup="{}" id="tmpVideo0"><source src="/uploads/video/20261126/1764139201000-v1d2e3.mp4" type="video/mp4"/></video></p>',
  '<p><audio class="edui-audio-audio" controls=""><source src="/uploads/audio/20261126/1764139202000-a4b5c6.mp3" type="audio/mpeg"/></audio></p>',
  '<p style="line-height: 16px;"><img style="vertical-align: middle; margin-right: 2px;" src="/ueditor-plus/dialogs/attachment/fileTypeImages/icon_pdf.gif"/><a style="font-size:12px; color:#0066cc;" href="/uploads/file/20261126/1764139203000-f7g8h9.pdf" title="report.pdf">report.pdf</a></p>',
  '<p><img src="/formula.svg?%5Cfrac%7B1%7D%7B2%7D" data-formula-image="%5Cfrac%7B1%7D%7B2%7D"/> 与 <img src="https://r.latexeasy.com/image.svg?E%3Dmc%5E2" data-formula-image="E%3Dmc%5E2"/></p>',
  '<pre class="brush:js;toolbar:false">function add(a, b) {\n  return a &lt; b ? b : a;\n}</pre>',
  '<hr class="pagebreak" noshade="noshade" size="5" style="-webkit-user-select: none;"/>',
  '<p>分页后的内容</p>',
  '<hr/>',
  '<table width="100%" border="1" style="border-collapse: collapse;" class="ue-table-interlace-color-single"><caption>季度数据</caption><tbody><tr class="firstRow"><th width="120" valign="middle" style="border-color: #ddd; background-color: #f2f2f2;">季度</th><th width="120" valign="middle">收入</th><th valign="middle">备注</th></tr><tr><td width="120" valign="top" style="word-break: break-all;">Q1</td><td width="120" valign="top" align="right">1,200</td><td rowspan="2" valign="middle" style="text-align: center;">合并单元格</td></tr><tr><td colspan="2" valign="top">Q2 与 Q3 合计</td></tr></tbody></table>',
  '<p><span style="font-style: italic; font-weight: bold; color: rgb(51, 153, 204);">自定义样式</span></p>',
  '<p>2026-11-26 14:30:00 ©®™ ≈ ≠ ∑ →</p>',
  '<p style="text-align: center;"><img src="/uploads/image/20261126/1764139204000-w1x2y3.webp" srcset="/uploads/image/20261126/1764139204000-w1x2y3.webp 1x" alt="" data-latex="" width="100%"/></p>',
].join('')

/**
 * What the cleaning changes in it, and nothing else: `id` goes (an element id can shadow the
 * host page's globals), a `target="_blank"` link gets `rel="noopener noreferrer"`, and the
 * `list-paddingleft-2` and `firstRow` classes go (not UEditor Plus's own prefixes: the editor
 * adds them while editing and its own output rules drop them on most paths).
 */
export const DOCUMENTED_CHANGES = ['id removed', 'rel added', 'editing classes removed'] as const
