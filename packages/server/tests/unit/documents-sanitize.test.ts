import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { parseDocument } from 'htmlparser2'
import { loadConfig } from '../../src/config/load.js'
import { articleUrls } from '../../src/documents/article-urls.js'
import { cleanSettings } from '../../src/documents/clean.js'
import { type CleanPool, createCleanPool } from '../../src/documents/clean-pool.js'
import { fileUrls } from '../../src/documents/references.js'
import { createArticleSanitizer } from '../../src/documents/sanitize.js'
import { isUeError, type UeErrorCode } from '../../src/shared/errors.js'
import { UEDITOR_PLUS_ARTICLE } from '../helpers/ueditor-plus-article.js'

const config = loadConfig({ env: {}, overrides: { documents: { enabled: true } } })
const urls = fileUrls(config)
const limits = { maxDepth: 256, maxElements: 100_000 }
const sanitize = createArticleSanitizer({
  iframeHosts: [],
  isOwnFile: (url) => urls.keyOf(url) !== null,
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

  test('is idempotent: cleaning the cleaned article changes nothing', () => {
    const clean = sanitize(UEDITOR_PLUS_ARTICLE)
    assert.equal(sanitize(clean), clean)
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

  test('a key is found in every form the server hands out, and nowhere else', () => {
    const key = 'image/20261126/a-b.png'
    for (const url of [
      'https://files.example.com/u/image/20261126/a%2Db.png',
      'http://files.example.com/u/image/20261126/a%2Db.png?v=1#top',
      '//files.example.com/u/image/20261126/a%2Db.png',
      'https://cdn.example.comhttps://files.example.com/u/image/20261126/a%2Db.png',
      '/uploads/image/20261126/a%2Db.png',
      'https://ue.example.com/uploads/image/20261126/a%2Db.png',
    ])
      assert.equal(own.keyOf(url), key, url)
    for (const url of [
      'https://other.example.com/u/image/20261126/a%2Db.png',
      'https://files.example.com/other/image/20261126/a%2Db.png',
      'https://user@files.example.com/u/image/20261126/a%2Db.png',
      '/uploads/../secret.png',
      '/uploads/%E0%A4%A.png',
      'uploads/image/20261126/a%2Db.png',
      'javascript:alert(1)',
    ])
      assert.equal(own.keyOf(url), null, url)
    assert.equal(own.urlOf(key as never), 'https://files.example.com/u/image/20261126/a-b.png')
  })

  test('a remote address is an http(s) one on none of the own bases', () => {
    assert.equal(own.isRemote('https://img.example.org/x.png'), true)
    assert.equal(own.isRemote('//img.example.org/x.png'), true)
    assert.equal(own.isRemote('https://files.example.com/u/image/x.png'), false)
    assert.equal(own.isRemote('/uploads/image/x.png'), false)
    assert.equal(own.isRemote('data:image/png;base64,AAAA'), false)
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
