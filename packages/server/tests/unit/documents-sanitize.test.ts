import assert from 'node:assert/strict'
import { parseDocument } from 'htmlparser2'
import { loadConfig } from '../../src/config/load.js'
import { articleUrls } from '../../src/documents/article-urls.js'
import { cleanSettings, withStoredEmbeds } from '../../src/documents/clean.js'
import { type CleanPool, createCleanPool } from '../../src/documents/clean-pool.js'
import { fileUrls } from '../../src/documents/file-urls.js'
import { createArticleSanitizer } from '../../src/documents/sanitize.js'
import { isUeError, type UeErrorCode } from '../../src/shared/errors.js'
import { describe, test } from '../helpers/test.js'
import { UEDITOR_PLUS_ARTICLE, UEDITOR_PLUS_FEATURES } from '../helpers/ueditor-plus-article.js'

const config = loadConfig({ env: {}, overrides: { documents: { enabled: true } } })
const urls = fileUrls(config)
const limits = { maxDepth: 256, maxElements: 100_000 }
const sanitize = createArticleSanitizer({
  iframeHosts: [],
  isOwnFile: urls.isOwnFile,
  limits,
})

/** An element as its tag, attributes (styles as sorted declarations) and children; text as is. */
type Normal = string | { tag: string; attrs: Record<string, string>; children: Normal[] }

function normalized(html: string): Normal[] {
  return parseDocument(html).children.flatMap(normal)
}

type Node = ReturnType<typeof parseDocument>['children'][number]
type Element = Extract<Node, { attribs: unknown }>

function normal(node: Node): Normal[] {
  if (node.type === 'text') return [(node as { data: string }).data]
  if (node.type !== 'tag' && node.type !== 'script' && node.type !== 'style') return []
  const element = node as Element
  const attrs: Record<string, string> = {}
  for (const [name, value] of Object.entries(element.attribs).sort(([a], [b]) => (a < b ? -1 : 1)))
    attrs[name] = name === 'style' ? style(value) : name === 'class' ? classes(value) : value
  return [{ tag: element.name, attrs, children: element.children.flatMap(normal) }]
}

function style(value: string): string {
  return value
    .split(';')
    .map((d) => d.trim())
    .filter(Boolean)
    .map((d) => {
      const at = d.indexOf(':')
      return `${d.slice(0, at).trim().toLowerCase()}:${d
        .slice(at + 1)
        .trim()
        .replace(/\s+/g, ' ')}`
    })
    .sort()
    .join(';')
}

function classes(value: string): string {
  return value.split(/\s+/).filter(Boolean).join(' ')
}

/** The changes the cleaning is documented to make (docs/documents.md), applied by hand. */
function withDocumentedChanges(nodes: Normal[]): Normal[] {
  return nodes.map((n) => {
    if (typeof n === 'string') return n
    const { id: _id, ...attrs } = n.attrs
    if (n.tag === 'a' && attrs.target === '_blank') attrs.rel = 'noopener noreferrer'
    return {
      tag: n.tag,
      attrs: Object.fromEntries(Object.entries(attrs).sort(([a], [b]) => (a < b ? -1 : 1))),
      children: withDocumentedChanges(n.children),
    }
  })
}

describe('the article sanitiser', () => {
  test('keeps a UEditor Plus article made of every toolbar feature, meaning for meaning', () => {
    const clean = sanitize(UEDITOR_PLUS_ARTICLE)
    assert.deepEqual(normalized(clean), withDocumentedChanges(normalized(UEDITOR_PLUS_ARTICLE)))
  })

  test('keeps what each toolbar feature of UEditor Plus 4.5 writes as written, but for attribute and style order and the documented changes', () => {
    for (const [feature, html] of UEDITOR_PLUS_FEATURES)
      assert.deepEqual(normalized(sanitize(html)), withDocumentedChanges(normalized(html)), feature)
  })

  test('keeps the attachment chip a flex box and a sortable table sortable, and no other value of either', () => {
    const chip =
      '<a style="display:inline-flex;align-items:center" href="/uploads/file/x.pdf"><span style="flex-grow:1">x.pdf</span></a>'
    assert.equal(sanitize(chip), chip)
    assert.equal(sanitize('<div style="display:flex">x</div>'), '<div style="display:flex">x</div>')
    for (const style of [
      'display:grid',
      'align-items:anchor-center',
      'flex-grow:-1',
      'flex-grow:calc(1)',
    ])
      assert.equal(sanitize(`<span style="${style}">x</span>`), '<span>x</span>', style)
    assert.equal(
      sanitize(
        '<table data-sort="sortEnabled" data-sort-type="reversebynum" class="sortEnabled"></table>',
      ),
      '<table data-sort="sortEnabled" data-sort-type="reversebynum" class="sortEnabled"></table>',
    )
    assert.equal(
      sanitize('<table data-sort="javascript:x" data-sort-type="other" data-sortx="1"></table>'),
      '<table></table>',
    )
  })

  test('is idempotent: cleaning the cleaned article changes nothing', () => {
    const clean = sanitize(UEDITOR_PLUS_ARTICLE)
    assert.equal(sanitize(clean), clean)
  })

  test('keeps positive spacing and indents, and drops every value that moves a box out of its place', () => {
    const styleOf = (style: string) =>
      /style="([^"]*)"/.exec(sanitize(`<p style="${style}">x</p>`))?.[1]
    for (const style of [
      'margin:0 10px 0 0',
      'margin:0 auto',
      'margin-top:10px',
      'margin-left:21.0pt',
      'margin:10px !important',
      'text-indent:2em',
      'text-indent:0em',
      'letter-spacing:2px',
      'word-spacing:0.5em',
      'list-style-type:lower-alpha',
      'list-style:none',
      'list-style:decimal inside',
      'float:left',
    ])
      assert.equal(styleOf(style), style.replace(/\s*!important/, ' !important'), style)
    for (const style of [
      'margin-top:-400px',
      'margin:-1px',
      'margin:0 0 0 -300px',
      'margin-left:-.5em',
      'margin-top:-100%',
      'margin-top:calc(-400px)',
      'margin-top:calc(0px - 400px)',
      'margin-top:-webkit-calc(-400px)',
      'margin-top:min(-400px, 0px)',
      'margin-top:max(-400px, -1px)',
      'margin-top:clamp(-400px, -400px, -400px)',
      'margin-top:var(--header-height)',
      'margin-top:-1e3px',
      'margin-top:0/**/-400px',
      'margin-block-start:-400px',
      'margin-inline-start:-300px',
      'text-indent:-2em',
      'text-indent:calc(-2em)',
      'letter-spacing:-1px',
      'word-spacing:-5px',
      "list-style-type:'WWWW'",
      'list-style-type:symbols(cyclic x)',
      "list-style:'WWWW' outside",
      'position:relative;top:-400px',
      'position:absolute',
      'inset:0',
      'transform:translateY(-400px)',
      'translate:0 -400px',
      'rotate:45deg',
      'scale:20',
      'z-index:9999',
    ])
      assert.equal(styleOf(style), undefined, style)
  })

  test("finds the article's stored files and remote images in it", () => {
    const found = articleUrls(sanitize(UEDITOR_PLUS_ARTICLE), limits)
    const keys = [...new Set(found.all.map(urls.keyOf).filter((k) => k !== null))].sort()
    assert.deepEqual(keys, [
      'audio/20261126/1764139202000-a4b5c6.mp3',
      'file/20261126/1764139203000-f7g8h9.pdf',
      'image/20261126/1764139200123-k3j9x2.png',
      'image/20261126/1764139200456-p0q1r2.jpg',
      'image/20261126/1764139204000-w1x2y3.webp',
      'scrawl/20261126/1764139200789-s7t8u9.png',
      'video/20261126/1764139201000-v1d2e3.mp4',
    ])
    assert.deepEqual(
      [...new Set(found.images.filter(urls.isRemote))],
      ['http://img.baidu.com/hi/jx2/j_0002.gif', 'https://r.latexeasy.com/image.svg?E%3Dmc%5E2'],
    )
  })
})

describe('stored-file URLs', () => {
  const cdn = loadConfig({
    env: {},
    overrides: {
      publicUrl: 'https://files.example.com/u/',
      editor: { imageUrlPrefix: 'https://cdn.example.com', catcherLocalDomain: ['ue.example.com'] },
    },
  })
  const own = fileUrls(cdn)

  const key = 'image/20261126/a-b.png'

  test('a key is found in every form a browser resolves to a stored-file path, whatever the host', () => {
    for (const url of [
      'https://files.example.com/u/image/20261126/a%2Db.png',
      'http://files.example.com/u/image/20261126/a%2Db.png?v=1#top',
      '//files.example.com/u/image/20261126/a%2Db.png',
      'HTTPS://FILES.EXAMPLE.COM/u/image/20261126/a-b.png',
      'https://cdn.example.comhttps://files.example.com/u/image/20261126/a%2Db.png',
      '/uploads/image/20261126/a%2Db.png',
      'https://ue.example.com/uploads/image/20261126/a%2Db.png',
      // A host with a port, another host, a former host, a user part: the path decides.
      'http://127.0.0.1:8080/uploads/image/20261126/a-b.png',
      '//localhost:8080/uploads/image/20261126/a-b.png',
      'https://other.example.com/u/image/20261126/a%2Db.png',
      'https://user@files.example.com/u/image/20261126/a%2Db.png',
      // Backslashes are slashes in http(s) URLs; `http:/x` is relative on an http page.
      '\\uploads\\image\\20261126\\a-b.png',
      '\\\\files.example.com\\u\\image\\20261126\\a-b.png',
      'http:/uploads/image/20261126/a-b.png',
      'https:\\uploads\\image\\20261126\\a-b.png',
      // Page-relative, under any page path; dot segments; percent-encoded letters and slashes.
      'uploads/image/20261126/a%2Db.png',
      './uploads/image/20261126/a-b.png',
      '../../uploads/image/20261126/a-b.png',
      '/posts/12/uploads/image/20261126/a-b.png',
      '/uploads/%69mage%2F20261126/a-b.png',
      ' \t/uploads/image/2026\n1126/a-b.png ',
    ])
      assert.equal(own.keyOf(url), key, url)
    for (const url of [
      'https://files.example.com/other/image/20261126/a%2Db.png',
      '/uploads/../secret.png',
      '/uploads/%E0%A4%A.png',
      '/uploads/',
      '/uploads/image/20261126/a%252Db.png',
      'javascript:alert(1)',
      'data:image/png;base64,AAAA',
      'mailto:a@uploads.example',
    ])
      assert.equal(own.keyOf(url), null, url)
    assert.equal(own.urlOf(key as never), 'https://files.example.com/u/image/20261126/a-b.png')
  })

  test('a key a path format renders counts at the end of any path, for a CDN whose path changed', () => {
    const rendered = 'image/20261126/1764139200123k3j9x2a8b7c6d5e4f3g2h1i0.png'
    for (const url of [
      `https://old-cdn.example/static/${rendered}`,
      `https://old-cdn.example/${rendered}?v=2`,
      `/uploads/posts/12/uploads/${rendered}`,
    ])
      assert.equal(own.keyOf(url), rendered, url)
    assert.equal(own.keyOf(`https://old-cdn.example/static/${rendered.replace('.png', '')}`), null)
  })

  test("an own file is one a browser asks this server's hosts or the page's for, under a base", () => {
    for (const url of [
      '/uploads/image/20261126/a-b.png',
      'https://files.example.com/u/image/20261126/a-b.png',
      '//ue.example.com/uploads/image/20261126/a-b.png',
      'https://ue.example.com:8080/uploads/image/20261126/a-b.png',
    ])
      assert.equal(own.isOwnFile(url), true, url)
    for (const url of [
      'https://evil.example/uploads/image/20261126/a-b.png',
      'https://ue.example.com:9999/uploads/image/20261126/a-b.png',
      '/\\evil.example/uploads/image/20261126/a-b.png',
      '\\\\evil.example\\uploads\\image\\20261126\\a-b.png',
      'https:evil.example/uploads/image/20261126/a-b.png',
      'http:/uploads/image/20261126/a-b.png',
      'https://user@files.example.com/u/image/20261126/a-b.png',
      'https://files.example.com/other/image/20261126/a-b.png',
      '/posts/12/uploads/image/20261126/a-b.png',
      'javascript:alert(1)',
    ])
      assert.equal(own.isOwnFile(url), false, url)
  })

  test("a remote address is an http(s) one on none of the server's hosts, however it is spelled", () => {
    for (const url of [
      'https://img.example.org/x.png',
      '//img.example.org/x.png',
      '\\\\img.example.org\\x.png',
      'https:\\\\img.example.org/x.png',
      // A foreign host is foreign even when its path looks like a stored file's.
      'https://other.example.com/u/image/20261126/a-b.png',
    ])
      assert.equal(own.isRemote(url), true, url)
    for (const url of [
      'https://files.example.com/u/image/x.png',
      'https://ue.example.com/any/x.png',
      '/uploads/image/x.png',
      'uploads/image/x.png',
      'http:/x.png',
      'data:image/png;base64,AAAA',
      'javascript:alert(1)',
    ])
      assert.equal(own.isRemote(url), false, url)
  })
})

describe('the cleaning workers', () => {
  const settings = cleanSettings(config)
  const body = (html: string) => ({ bytes: new TextEncoder().encode(html), json: false })
  /** An article within the limits that takes a worker far longer than 200 ms to clean. */
  const slow = body(
    '<span style="font-size:14px;color:#333;background:url(/uploads/a.png)">t</span>'.repeat(
      90_000,
    ),
  )
  const pool = (
    t: { after(fn: () => Promise<void>): void },
    o: Partial<Parameters<typeof createCleanPool>[0]> = {},
  ) => {
    const p = createCleanPool({
      settings,
      workers: 2,
      timeoutMs: 10_000,
      maxQueue: 16,
      memoryMb: 256,
      ...o,
    })
    t.after(() => p.close())
    return p
  }
  const refusedWith = (code: UeErrorCode, detail?: RegExp) => (e: unknown) =>
    isUeError(e) && e.code === code && (detail === undefined || detail.test(e.detail ?? ''))

  test('no worker runs before the first save; it starts them all, and never more however many saves wait', async (t) => {
    const p: CleanPool = pool(t)
    assert.equal(p.stats.live, 0)
    const saved = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        p.clean(body(`<p>${i}<img src="/uploads/image/20261126/a-b.png"></p>`)),
      ),
    )
    assert.deepEqual(
      saved.map((a) => [JSON.parse(a.htmlJson), a.keys]),
      Array.from({ length: 6 }, (_, i) => [
        `<p>${i}<img src="/uploads/image/20261126/a-b.png" /></p>`,
        ['image/20261126/a-b.png'],
      ]),
    )
    assert.equal(p.stats.workersStarted, 2)
    assert.equal(p.stats.live, 2)
  })

  test('a worker answers what the save answers: the HTML and the remote images as safe JSON, and the keys', async (t) => {
    const a = await pool(t).clean({
      bytes: new TextEncoder().encode(
        JSON.stringify({
          html: '<p>&lt;x&gt;<img src="https://img.example.org/a.png?x=1&y=2"></p>',
        }),
      ),
      json: true,
    })
    assert.equal(
      a.htmlJson,
      '"\\u003cp\\u003e\\u0026lt;x\\u0026gt;\\u003cimg src=\\"https://img.example.org/a.png?x=1\\u0026amp;y=2\\" /\\u003e\\u003c/p\\u003e"',
    )
    assert.deepEqual(a.foreign, ['https://img.example.org/a.png?x=1&y=2'])
    assert.equal(a.foreignJson, '["https://img.example.org/a.png?x=1\\u0026y=2"]')
    assert.deepEqual(a.keys, [])
  })

  test("a worker hands back each kept embed's stored-file key and its place in the HTML's JSON, for the save to drop", async (t) => {
    const a = await pool(t).clean(
      body(
        '<p>&lt;中\u2028</p><embed src="/uploads/video/20261126/a-b.mp4?x=1&amp;y=&quot;2&quot;">' +
          '<p>"</p><embed src="https://evil.example/x.swf"><embed src="/uploads/video/20261126/c.mp4">',
      ),
    )
    assert.deepEqual(
      a.embeds.map((e) => [e.key, JSON.parse(`"${a.htmlJson.slice(e.start, e.end)}"`)]),
      [
        [
          'video/20261126/a-b.mp4',
          '<embed src="/uploads/video/20261126/a-b.mp4?x=1&amp;y=&quot;2&quot;" />',
        ],
        ['video/20261126/c.mp4', '<embed src="/uploads/video/20261126/c.mp4" />'],
      ],
    )
    assert.equal(
      JSON.parse(
        withStoredEmbeds(a.htmlJson, a.embeds, new Set(['video/20261126/c.mp4' as never])),
      ),
      '<p>&lt;中\u2028</p><p>"</p><embed src="/uploads/video/20261126/c.mp4" />',
    )
  })

  test('an article that overruns the deadline is refused with UE_DOCUMENT_TOO_COMPLEX, and its worker is replaced', async (t) => {
    const p = pool(t, { workers: 1, timeoutMs: 200 })
    await p.clean(body('<p>warm</p>'))
    await assert.rejects(
      p.clean(slow),
      refusedWith('UE_DOCUMENT_TOO_COMPLEX', /longer than 200 ms/),
    )
    assert.equal(p.stats.overruns, 1)
    assert.equal(JSON.parse((await p.clean(body('<p>next</p>'))).htmlJson), '<p>next</p>')
    assert.equal(p.stats.workersStarted, 2)
    assert.equal(p.stats.live, 1)
  })

  test('an article past the limits is refused by the worker, which goes on cleaning', async (t) => {
    const p = pool(t, { workers: 1 })
    await assert.rejects(
      p.clean(body('<b>'.repeat(300))),
      refusedWith('UE_DOCUMENT_TOO_COMPLEX', /256 deep/),
    )
    await assert.rejects(
      p.clean({ bytes: new Uint8Array([0xff]), json: false }),
      refusedWith('UE_BODY_INVALID'),
    )
    assert.equal(JSON.parse((await p.clean(body('<p>ok</p>'))).htmlJson), '<p>ok</p>')
    assert.equal(p.stats.workersStarted, 1)
  })

  test('saves past maxQueue waiting are refused with UE_BUSY; closing refuses the rest and ends every worker', async (t) => {
    const p = pool(t, { workers: 1, maxQueue: 1 })
    await p.clean(body('<p>warm</p>'))
    const running = p.clean(slow)
    const waiting = p.clean(body('<p>waits</p>'))
    await assert.rejects(p.clean(body('<p>one too many</p>')), refusedWith('UE_BUSY'))
    const refused = Promise.all([
      assert.rejects(running, refusedWith('UE_SHUTTING_DOWN')),
      assert.rejects(waiting, refusedWith('UE_SHUTTING_DOWN')),
    ])
    await p.close()
    await refused
    await assert.rejects(p.clean(body('<p>after</p>')), refusedWith('UE_SHUTTING_DOWN'))
    assert.equal(p.stats.live, 0)
  })
})
