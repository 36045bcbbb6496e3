import assert from 'node:assert/strict'
import { parseDocument } from 'htmlparser2'
import { WHITE_LIST } from '../../src/documents/allow-list.js'
import { articleUrls } from '../../src/documents/article-urls.js'
import { type ArticleLimits, createArticleSanitizer } from '../../src/documents/sanitize.js'
import { isUeError } from '../../src/shared/errors.js'
import { describe, test } from '../helpers/test.js'
import { MATERIAL_XSS_PAYLOADS } from '../helpers/xss-payloads.js'

const sanitize = createArticleSanitizer({
  iframeHosts: ['player.example.com'],
  isOwnFile: (url) => url.startsWith('/uploads/'),
  limits: { maxDepth: 256, maxElements: 100_000 },
})

type Node = ReturnType<typeof parseDocument>['children'][number]
type Element = Extract<Node, { attribs: unknown }>

const URL_ATTRIBUTES = new Set(['href', 'src', 'poster', 'cite', 'srcset', 'action', 'formaction'])
const KEPT_TAGS = new Set([...Object.keys(WHITE_LIST), 'iframe', 'embed'])
const SAFE_URL = /^(?:https?:|mailto:|tel:|ftp:|\/|#|\?|[^:]*$)/i
const RASTER_DATA = /^data:image\/(?:png|jpe?g|gif|webp|bmp);base64,/i

/**
 * What no cleaned article may hold, read back with a real HTML parser: an element off the
 * allow-list, an event handler, a script-bearing or document-loading address, a style that can
 * run script or fetch anything but an http(s) image; and cleaning it again must change nothing.
 */
function assertInert(html: string): void {
  const walk = (nodes: readonly Node[]) => {
    for (const node of nodes) {
      if (node.type === 'comment') assert.fail(`a comment survived: ${html}`)
      if (!('attribs' in node)) continue
      const element = node as Element
      assert.ok(KEPT_TAGS.has(element.name), `<${element.name}> in ${html}`)
      for (const [name, value] of Object.entries(element.attribs)) {
        assert.ok(!/^on/i.test(name), `${name} in ${html}`)
        if (URL_ATTRIBUTES.has(name))
          for (const url of name === 'srcset'
            ? value.split(/,\s+/).map((c) => c.split(/\s+/)[0] ?? '')
            : [value])
            assert.ok(
              SAFE_URL.test(url.trim()) || (element.name === 'img' && RASTER_DATA.test(url)),
              `${name}="${value}" in ${html}`,
            )
        if (name === 'style') {
          assert.doesNotMatch(
            value,
            /expression|javascript|vbscript|behaviou?r|binding|@import|\\/i,
          )
          for (const m of value.matchAll(/url\(\s*['"]?([^'")]*)/gi))
            assert.match(m[1] ?? '', /^(?:https?:\/\/|\/\/|\/|[^:]*$)/i, `${value} in ${html}`)
        }
      }
      walk(element.children)
    }
  }
  walk(parseDocument(html).children)
  assert.equal(sanitize(html), html, 'cleaning again changes nothing')
}

/** Payloads beyond the materials catalogue, with the exact article each must leave. */
const ARTICLE_PAYLOADS: readonly [name: string, payload: string, clean: string][] = [
  ['svg onload', '<svg onload=alert(1)><p>x</p></svg><p>after</p>', '<p>after</p>'],
  ['svg with a nested image', '<svg><image href="javascript:alert(1)"/></svg>', ''],
  [
    'mXSS namespace confusion through math and style',
    '<math><mtext><table><mglyph><style><!--</style><img title="--&gt;&lt;img src=1 onerror=alert(1)&gt;">',
    '',
  ],
  [
    'mXSS through a form inside math',
    '<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>',
    '',
  ],
  [
    'mXSS through svg, p and style',
    '<svg></p><style><a id="</style><img src=1 onerror=alert(1)>">',
    '',
  ],
  [
    'noscript re-parsing',
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript><p>ok</p>',
    '<p>ok</p>',
  ],
  [
    'CSS expression',
    '<p style="width:expression(alert(1));color:red">x</p>',
    '<p style="color:red">x</p>',
  ],
  [
    'CSS url(javascript:)',
    '<span style="background:url(javascript:alert(1))">x</span>',
    '<span>x</span>',
  ],
  [
    'CSS url() with an escaped colon',
    '<span style="background-image:url(java\\3a script:alert(1))">x</span>',
    '<span>x</span>',
  ],
  [
    'CSS url() of an http image is kept',
    '<p style="background-image:url(https://cdn.example.com/bg.png)">x</p>',
    '<p style="background-image:url(https://cdn.example.com/bg.png)">x</p>',
  ],
  [
    'a style attribute with @import',
    '<p style="@import url(//evil.example/x.css);color:red">x</p>',
    '<p style="color:red">x</p>',
  ],
  [
    'a style element with @import',
    '<style>@import url(//evil.example/x.css);</style><p>x</p>',
    '<p>x</p>',
  ],
  [
    'srcset with a javascript: candidate',
    '<img src="/uploads/a.png" srcset="javascript:alert(1) 1x, /uploads/b.png 2x">',
    '<img src="/uploads/a.png" srcset="/uploads/b.png 2x" />',
  ],
  ['formaction on a button', '<button formaction="javascript:alert(1)">go</button>', 'go'],
  [
    'formaction on an input',
    '<form><input type="submit" formaction="javascript:alert(1)"></form>',
    '',
  ],
  [
    'javascript: in decimal entities',
    '<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)">x</a>',
    '<a>x</a>',
  ],
  [
    'javascript: in hex entities without semicolons',
    '<a href="&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A;alert(1)">x</a>',
    '<a>x</a>',
  ],
  [
    'javascript: with a named colon entity',
    '<a href="javascript&colon;alert(1)">x</a>',
    '<a>x</a>',
  ],
  [
    'javascript: split by a newline entity',
    '<a href="jav&#x0A;ascript:alert(1)">x</a>',
    '<a>x</a>',
  ],
  ['javascript: split by a tab and padded', '<a href="  java\tscript:alert(1)">x</a>', '<a>x</a>'],
  ['vbscript:', '<a href="vbscript:msgbox(1)">x</a>', '<a>x</a>'],
  ['data:text/html link', '<a href="data:text/html,<script>alert(1)</script>">x</a>', '<a>x</a>'],
  [
    'data: SVG image',
    '<img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+">',
    '<img />',
  ],
  [
    'data: raster image (the editor pastes these) is kept',
    '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">',
    '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" />',
  ],
  ['nested comments', '<!-- <!-- --><script>alert(1)</script> --><p>x</p>', ' --&gt;<p>x</p>'],
  [
    'a comment that closes early',
    '<!--><img src=x onerror=alert(1)>--><p>x</p>',
    '<img src="x" />--&gt;<p>x</p>',
  ],
  [
    'a conditional comment',
    '<!--[if IE]><script>alert(1)</script><![endif]--><p>x</p>',
    '<p>x</p>',
  ],
  ['an unclosed img tag', '<p>x</p><img src=x onerror=alert(1)//', '<p>x</p>'],
  ['an unclosed script', '<p>x</p><script>alert(1)', '<p>x</p>'],
  ['an unclosed link', '<a href="javascript:alert(1)">x', '<a>x</a>'],
  ['unclosed formatting', '<p><b>bold<i>both', '<p><b>bold<i>both</i></b></p>'],
  [
    'an iframe of an allowed host gets the sandbox',
    '<iframe class="edui-video-iframe" src="https://player.example.com/v/1" width="420" height="280" frameborder="0" allowfullscreen onload="alert(1)"></iframe>',
    '<iframe class="edui-video-iframe" src="https://player.example.com/v/1" width="420" height="280" frameborder="0" allowfullscreen sandbox="allow-scripts allow-same-origin allow-presentation allow-popups" referrerpolicy="no-referrer"></iframe>',
  ],
  [
    'an iframe of another host',
    '<iframe src="https://evil.example/x"></iframe><p>x</p>',
    '<p>x</p>',
  ],
  [
    'an iframe of an allowed host over http',
    '<iframe src="http://player.example.com/v/1"></iframe>',
    '',
  ],
  [
    'an iframe whose user part names the allowed host',
    '<iframe src="https://player.example.com@evil.example/x"></iframe>',
    '',
  ],
  ['an iframe with javascript:', '<iframe src="javascript:alert(1)"></iframe>', ''],
  ['an iframe with srcdoc', '<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>', ''],
  [
    'an embed of a stored file is kept without a plugin type',
    '<embed type="application/x-shockwave-flash" class="edui-faked-video" src="/uploads/video/v.mp4" width="420" height="280" allowscriptaccess="always">',
    '<embed class="edui-faked-video" src="/uploads/video/v.mp4" width="420" height="280" />',
  ],
  ['an embed of another site', '<embed src="https://evil.example/x.swf"><p>x</p>', '<p>x</p>'],
  ['an object', '<object data="/uploads/x.swf"><param name="x"></object><p>x</p>', '<p>x</p>'],
  [
    'a video poster with javascript: and video.js options',
    '<video src="/uploads/v.mp4" poster="javascript:alert(1)" data-setup=\'{"techOrder":["flash"]}\' controls></video>',
    '<video src="/uploads/v.mp4" controls></video>',
  ],
  [
    'details ontoggle',
    '<details open ontoggle="alert(1)"><summary>s</summary>x</details>',
    '<details open><summary>s</summary>x</details>',
  ],
  [
    'DOM clobbering through id and name',
    '<img id="getElementById" name="cookie" src="/uploads/a.png"><p id="config">x</p>',
    '<img src="/uploads/a.png" /><p>x</p>',
  ],
  [
    'a class of the host page',
    '<div class="modal-backdrop edui-x">x</div>',
    '<div class="edui-x">x</div>',
  ],
  [
    'position fixed overlay',
    '<div style="position:fixed;top:0;left:0;width:100%;height:100%">x</div>',
    '<div style="width:100%;height:100%">x</div>',
  ],
  [
    'meta, base and link',
    '<meta http-equiv="refresh" content="0;url=//evil.example"><base href="//evil.example/"><link rel="stylesheet" href="//evil.example/x.css"><p>x</p>',
    '<p>x</p>',
  ],
  [
    'a form and its fields',
    '<form action="https://evil.example"><input name="q"><textarea>t</textarea><select><option>o</option></select><button>go</button></form>',
    'go',
  ],
  ['target other than _blank and _self', '<a href="/x" target="_top">x</a>', '<a href="/x">x</a>'],
]

describe('the article sanitiser against the materials XSS catalogue', () => {
  for (const [payload] of MATERIAL_XSS_PAYLOADS)
    test(`leaves nothing that runs or loads from ${JSON.stringify(payload)}`, () => {
      assertInert(sanitize(payload))
    })
})

describe('the article sanitiser against more XSS payloads', () => {
  for (const [name, payload, clean] of ARTICLE_PAYLOADS)
    test(`cleans ${name}: ${JSON.stringify(payload)}`, () => {
      const out = sanitize(payload)
      assert.equal(out, clean)
      assertInert(out)
    })
})

describe('the limits of an article', () => {
  const limits: ArticleLimits = { maxDepth: 16, maxElements: 1_000 }
  const bounded = createArticleSanitizer({ iframeHosts: [], isOwnFile: () => false, limits })
  const tooComplex = (detail: RegExp) => (e: unknown) =>
    isUeError(e) && e.code === 'UE_DOCUMENT_TOO_COMPLEX' && detail.test(e.detail ?? '')

  test('nesting one element past maxDepth is refused with UE_DOCUMENT_TOO_COMPLEX; at the limit it is kept', () => {
    assert.equal(bounded(`${'<b>'.repeat(16)}x`), `${'<b>'.repeat(16)}x${'</b>'.repeat(16)}`)
    assert.throws(() => bounded(`${'<b>'.repeat(17)}x`), tooComplex(/nest more than 16 deep/))
    // Also where the parser keeps elements open that the cleaner drops.
    assert.throws(() => bounded(`${'<x-tag>'.repeat(17)}x`), tooComplex(/16 deep/))
  })

  test('one element past maxElements is refused; elements closed by the next one do not nest', () => {
    assert.equal(bounded('<p>x'.repeat(1_000)), '<p>x</p>'.repeat(1_000))
    assert.throws(() => bounded('<br>'.repeat(1_001)), tooComplex(/more than 1000 elements/))
  })

  test('end tags of elements that are not open cost nothing toward the limits and are dropped', () => {
    const html = `${'<b>'.repeat(16)}x${'</i>'.repeat(50_000)}`
    assert.equal(bounded(html), `${'<b>'.repeat(16)}x${'</b>'.repeat(16)}`)
  })

  test('reading the addresses holds to the same limits', () => {
    assert.throws(() => articleUrls('<b>'.repeat(17), limits), tooComplex(/16 deep/))
    assert.deepEqual(articleUrls('<img src="/a.png">'.repeat(1_000), limits).all.length, 1_000)
  })

  test('a refused iframe or embed goes with its content and leaves the elements after it as they were', () => {
    assert.equal(
      bounded(
        '<div><iframe src="https://evil.example/"><b>in</b></iframe><p>a</p></div><p>b</p><embed src="/x.swf"><p>c</p>',
      ),
      '<div><p>a</p></div><p>b</p><p>c</p>',
    )
  })

  test('the marker of refused elements cannot be written by an article: it is an unknown tag like any other', () => {
    assert.equal(bounded('<UE-REFUSED>x</UE-REFUSED><ue-refused>y</ue-refused>'), 'xy')
  })
})
