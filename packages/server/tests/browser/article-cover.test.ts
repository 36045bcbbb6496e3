import assert from 'node:assert/strict'
import type { Page } from 'playwright-core'
import { launchChromium } from '../helpers/chromium.js'
import { startTestServer } from '../helpers/start-server.js'
import { describe, type TestContext, test } from '../helpers/test.js'

/**
 * A host page as a CMS lays one out: a header with its "Log in" button above the article
 * column, a sidebar with another one beside it, and the article inserted into `#article`.
 */
const HOST_PAGE = `<!doctype html><html><head><style>
:root { --header-height: 56px }
body { margin: 0; font: 16px/1.5 sans-serif }
header { height: var(--header-height); padding: 12px 0 0 420px; box-sizing: border-box; background: #f4f4f4 }
.layout { display: flex }
aside { width: 200px; padding: 16px; box-sizing: border-box }
main { width: 600px }
</style></head><body>
<header><button id="login">Log in</button></header>
<div class="layout"><aside><button id="side-login">Log in</button></aside><main><div id="article"></div></main></div>
</body></html>`

const PHISH = 'https://evil.example/phish'
const link = (style: string, text = 'x') => `<a href="${PHISH}" style="${style}">${text}</a>`

/** Articles that lay a link over one of the host page's buttons, each in its own way. */
const COVERING: [string, string][] = [
  ['a negative top margin', link('display:block;margin-top:-400px;height:400px;color:transparent')],
  ['a negative margin in the shorthand', link('display:block;margin:-400px 0 0 0;height:400px')],
  ['a negative margin in em', link('display:block;margin-top:-25em;height:400px')],
  ['a negative margin in percent', link('display:block;margin-top:-100%;height:700px')],
  ['a negative margin through calc()', link('display:block;margin-top:calc(-400px);height:400px')],
  [
    "a negative margin from the host page's own variable",
    link('display:block;margin-top:calc(var(--header-height) * -8);height:500px'),
  ],
  [
    'a negative margin through min()',
    link('display:block;margin-top:min(-400px, 0px);height:400px'),
  ],
  [
    'a negative margin through -webkit-calc()',
    link('display:block;margin-top:-webkit-calc(-400px);height:400px'),
  ],
  ['a float with a negative margin', link('float:left;margin-top:-400px;width:600px;height:400px')],
  ['a negative left margin', link('display:block;margin-left:-300px;height:200px')],
  [
    'a negative left margin in the shorthand',
    link('display:block;margin:0 0 0 -300px;height:200px'),
  ],
  ['a logical negative margin', link('display:block;height:400px;margin-block-start:-400px')],
  [
    'a logical negative inline margin',
    link('display:block;height:400px;margin-inline-start:-300px'),
  ],
  [
    'a negative first-line indent',
    `<p style="text-indent:-300px">${link('display:inline-block;width:300px;height:100px')}</p>`,
  ],
  [
    'a list marker of any text',
    `<ul><li style="list-style-type:'WWWWWWWWWWWWWWWWWWWW';font-size:40px">${link('')}</li></ul>`,
  ],
  [
    'a list marker of any text in the shorthand',
    `<ul><li style="list-style:'WWWWWWWWWWWWWWWWWWWW' outside;font-size:40px">${link('')}</li></ul>`,
  ],
  ['a relative position', link('position:relative;top:-400px;display:block;height:400px')],
  ['an absolute position', link('position:absolute;top:0;left:0;width:100%;height:100%')],
  ['a fixed position with inset', link('position:fixed;inset:0')],
  ['a transform', link('display:block;height:400px;transform:translateY(-400px)')],
  ['translate', link('display:block;height:400px;translate:-300px -400px')],
  ['scale', link('display:block;height:100px;scale:20')],
  ['rotate', link('display:block;width:600px;height:600px;rotate:45deg')],
]

/** Content that is wider or taller than its place in the flow, as any page's can be. */
const OVERFLOWING: [string, string][] = [
  [
    'a letter taller than its line',
    `<p style="line-height:0"><a href="${PHISH}" style="font-size:300px;line-height:0">MMM</a></p>`,
  ],
  [
    'a large letter on a line of fixed height',
    `<p style="line-height:16px"><a href="${PHISH}" style="font-size:300px">MMM</a></p>`,
  ],
  [
    'a box wider than the column, right to left',
    `<div dir="rtl">${link('display:block;width:3000px;height:300px')}</div>`,
  ],
  ['the marker of a large list item', `<ol><li style="font-size:300px">${link('', 'x')}</li></ol>`],
]

/** The cleaned article, as `PUT /documents/{id}` answers it. */
async function cleaned(base: string, id: string, html: string): Promise<string> {
  const res = await fetch(`${base}/documents/${encodeURIComponent(id)}`, {
    method: 'PUT',
    headers: { 'Content-Type': 'text/html' },
    body: html,
  })
  assert.equal(res.status, 200, await res.clone().text())
  return ((await res.json()) as { html: string }).html
}

/**
 * Puts `html` into the host page's article box (styled `container`) and names the buttons on
 * which `document.elementFromPoint`, at a corner or the middle, finds anything but the button.
 */
async function covered(page: Page, html: string, container = ''): Promise<string[]> {
  return page.evaluate(
    ({ html, container }) => {
      const box = document.getElementById('article') as HTMLElement
      box.setAttribute('style', container)
      box.innerHTML = html
      const hit: string[] = []
      for (const id of ['login', 'side-login']) {
        const button = document.getElementById(id) as HTMLElement
        const r = button.getBoundingClientRect()
        const points = [
          [r.left + 2, r.top + 2],
          [r.left + r.width / 2, r.top + r.height / 2],
          [r.right - 2, r.bottom - 2],
        ] as const
        if (points.some(([x, y]) => !button.contains(document.elementFromPoint(x, y)))) hit.push(id)
      }
      box.innerHTML = ''
      return hit
    },
    { html, container },
  )
}

async function hostPage(t: TestContext): Promise<Page | null> {
  const browser = await launchChromium(t)
  if (!browser) return null
  const page = await browser.newPage({ viewport: { width: 1000, height: 700 } })
  // The page loads nothing: the attempts only link to their target.
  await page.setContent(HOST_PAGE)
  return page
}

describe('an article shown in a host page, in Chromium', () => {
  test('no covering attempt lies over the host page’s “Log in” buttons once cleaned, though each does as written', {
    timeout: 120_000,
  }, async (t) => {
    const srv = await startTestServer(t, { documents: { enabled: true } })
    const page = await hostPage(t)
    if (!page) return
    for (const [n, [name, html]] of COVERING.entries()) {
      assert.notDeepEqual(await covered(page, html), [], `as written, ${name} covers a button`)
      const clean = await cleaned(srv.url, `cover-${n}`, html)
      assert.deepEqual(await covered(page, clean), [], `cleaned, ${name} covers nothing: ${clean}`)
      assert.match(clean, /href="https:\/\/evil\.example\/phish"/, 'the link itself stays')
    }
  })

  test('content wider or taller than its place covers nothing outside the container docs/documents.md gives the article', {
    timeout: 120_000,
  }, async (t) => {
    const srv = await startTestServer(t, { documents: { enabled: true } })
    const page = await hostPage(t)
    if (!page) return
    for (const [n, [name, html]] of OVERFLOWING.entries()) {
      const clean = await cleaned(srv.url, `overflow-${n}`, html)
      assert.notDeepEqual(
        await covered(page, clean),
        [],
        `without the container, ${name} overflows`,
      )
      for (const container of ['overflow-x:auto', 'overflow:hidden', 'contain:paint'])
        assert.deepEqual(await covered(page, clean, container), [], `${name} in ${container}`)
    }
  })
})
