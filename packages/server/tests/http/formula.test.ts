import assert from 'node:assert/strict'
import { imageInfo } from '../helpers/images.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'

/** What the UEditor Plus formula plugin does with the template: `{}` → the URL-encoded TeX. */
const formulaUrl = (srv: TestServer, tex: string, ext = 'svg') =>
  `${srv.url}/formula.${ext}?${encodeURIComponent(tex)}`

async function getFormula(srv: TestServer, tex: string, ext = 'svg') {
  const res = await fetch(formulaUrl(srv, tex, ext))
  const body = Buffer.from(await res.arrayBuffer())
  return { res, body, text: body.toString('utf8') }
}

/** Nothing in the picture may run or fetch: no script, no foreign content, no outside link. */
function assertSelfContained(svg: string): void {
  assert.doesNotMatch(svg, /<script|<foreignObject|<iframe|<image|javascript:|url\(|\son\w+=/i)
  for (const m of svg.matchAll(/\s(?:xlink:)?href="([^"]*)"/g))
    assert.ok(m[1]?.startsWith('#'), `reference leaving the image: ${m[1]}`)
}

function assertImageHeaders(res: Response, type: string): void {
  assert.equal(res.headers.get('content-type')?.split(';')[0], type)
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff')
  assert.match(res.headers.get('content-security-policy') ?? '', /^default-src 'none'/)
}

/** A 44 × 44 matrix: legal TeX that takes MathJax seconds to lay out. */
const SLOW_MATRIX = `\\begin{matrix}${Array.from({ length: 44 }, () => Array(44).fill('x').join('&')).join('\\\\')}\\end{matrix}`

/** UEditor's `utils.merge`: nested plain objects merge key by key, server values win. */
function clientMerge(page: Record<string, unknown>, server: Record<string, unknown>) {
  const out: Record<string, unknown> = { ...page }
  for (const [k, v] of Object.entries(server)) {
    const mine = out[k]
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && mine && typeof mine === 'object'
        ? clientMerge(mine as Record<string, unknown>, v as Record<string, unknown>)
        : v
  }
  return out
}

describe('formula images rendered by our own server', () => {
  test('a fraction, a root, a matrix and CJK inside \\text{} render as self-contained SVG', async (t) => {
    const srv = await startTestServer(t)
    const cases: [string, RegExp][] = [
      ['x = \\frac{-b \\pm \\sqrt{b^2-4ac}}{2a}', /data-mml-node="mfrac"/],
      ['\\sqrt[3]{x+1}', /data-mml-node="mroot"/],
      ['\\begin{pmatrix}1 & 2\\\\ 3 & 4\\end{pmatrix}', /data-mml-node="mtable"/],
      ['\\text{面积} = \\pi r^2', />面积</],
    ]
    for (const [tex, shape] of cases) {
      const { res, text } = await getFormula(srv, tex)
      assert.equal(res.status, 200, tex)
      assertImageHeaders(res, 'image/svg+xml')
      assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable')
      assert.match(text, /^<\?xml[^>]*>\s*<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/)
      assert.match(text, shape, tex)
      assertSelfContained(text)
      // The TeX is not copied into the picture's attributes.
      assert.doesNotMatch(text, /data-latex/)
    }
  })

  test('the same TeX gives the same bytes from the cache, and a matching ETag gets 304', async (t) => {
    const srv = await startTestServer(t)
    const formula = srv.ue.formula
    assert.ok(formula)
    const first = await getFormula(srv, 'e^{i\\pi} + 1 = 0')
    const rendersAfterFirst = formula.stats().renders
    const second = await getFormula(srv, 'e^{i\\pi} + 1 = 0')
    assert.equal(second.res.status, 200)
    assert.deepEqual(second.body, first.body)
    assert.equal(second.res.headers.get('etag'), first.res.headers.get('etag'))
    assert.equal(formula.stats().renders, rendersAfterFirst, 'the second answer was not rendered')
    assert.ok(formula.stats().cacheHits >= 1)
    const etag = first.res.headers.get('etag') ?? ''
    const again = await fetch(formulaUrl(srv, 'e^{i\\pi} + 1 = 0'), {
      headers: { 'If-None-Match': etag },
    })
    assert.equal(again.status, 304)
  })

  test('invalid TeX gets status 400 and an SVG that shows the error', async (t) => {
    const srv = await startTestServer(t)
    const { res, text } = await getFormula(srv, '\\frac{a')
    assert.equal(res.status, 400)
    assertImageHeaders(res, 'image/svg+xml')
    assert.equal(res.headers.get('x-ueditor-error'), 'UE_FORMULA_INVALID')
    assert.match(text, /Missing close brace/)
    assert.match(text, /data-mml-node="merror"/)
    assertSelfContained(text)
    const empty = await fetch(`${srv.url}/formula.svg?`)
    assert.equal(empty.status, 400)
    const broken = await fetch(`${srv.url}/formula.svg?%E4%ZZ`)
    assert.equal(broken.status, 400)
    assert.equal(broken.headers.get('content-type')?.split(';')[0], 'image/svg+xml')
  })

  test('\\def loops, a 100 KB formula, links and styles with URLs are refused without using the deadline', async (t) => {
    const srv = await startTestServer(t)
    const refusals: [string, number, string][] = [
      ['\\def\\a{\\a}\\a', 400, 'UE_FORMULA_INVALID'],
      ['\\def\\a{\\a\\a}\\a', 400, 'UE_FORMULA_INVALID'],
      [
        '\\newcommand{\\x}[1]{#1#1#1#1}\\x{\\x{\\x{\\x{\\x{\\x{\\x{\\x{y}}}}}}}}',
        400,
        'UE_FORMULA_INVALID',
      ],
      ['x'.repeat(5000), 414, 'UE_FORMULA_TOO_LONG'],
      ['\\href{javascript:alert(1)}{x}', 400, 'UE_FORMULA_INVALID'],
      ['\\url{javascript:alert(1)}', 400, 'UE_FORMULA_INVALID'],
      ['\\style{background:url(http://127.0.0.1/)}{x}', 400, 'UE_FORMULA_INVALID'],
      ['\\mmlToken{mi}[href="javascript:alert(1)"]{x}', 400, 'UE_FORMULA_INVALID'],
      ['\\color{url(http://127.0.0.1/x)}{x}', 400, 'UE_FORMULA_INVALID'],
      ['\\require{html}\\href{http://127.0.0.1/}{x}', 400, 'UE_FORMULA_INVALID'],
    ]
    for (const [tex, status, code] of refusals) {
      const { res, text } = await getFormula(srv, tex)
      assert.equal(res.status, status, tex.slice(0, 40))
      assert.equal(res.headers.get('x-ueditor-error'), code, tex.slice(0, 40))
      assertImageHeaders(res, 'image/svg+xml')
      assertSelfContained(text)
      assert.doesNotMatch(text, /127\.0\.0\.1|javascript/)
    }
    // 100 KB does not even fit in a request line: Node's header limit refuses it (431).
    const huge = await fetch(formulaUrl(srv, 'x'.repeat(100_000)))
    assert.ok([414, 431].includes(huge.status), String(huge.status))
    // Every refusal came from the input checks or MathJax's limits, never from the deadline.
    assert.equal(srv.ue.formula?.stats().overruns, 0)
  })

  test('a render that overruns its budget is ended while /healthz keeps answering, and the next formula renders', async (t) => {
    const srv = await startTestServer(t, {
      formula: { timeoutMs: 100, maxLength: 5000, workers: 1 },
    })
    let hostileSettled = false
    const hostile = getFormula(srv, SLOW_MATRIX).finally(() => {
      hostileSettled = true
    })
    const health = await fetch(`${srv.url}/healthz`)
    assert.equal(health.status, 200)
    assert.equal(hostileSettled, false, 'the health check answered while the render was running')
    const { res, text } = await hostile
    assert.equal(res.status, 422)
    assert.equal(res.headers.get('x-ueditor-error'), 'UE_FORMULA_TOO_COMPLEX')
    assert.equal(res.headers.get('cache-control'), 'no-store')
    assert.match(text, /<svg/)
    assert.equal(srv.ue.formula?.stats().overruns, 1)
    const next = await getFormula(srv, '\\frac{1}{2}')
    assert.equal(next.res.status, 200)
  })

  test('deeply nested TeX that would overflow the stack is refused as too complex', async (t) => {
    const srv = await startTestServer(t)
    const { res } = await getFormula(srv, `${'{'.repeat(999)}x${'}'.repeat(999)}`)
    assert.equal(res.status, 422)
    assert.equal(res.headers.get('x-ueditor-error'), 'UE_FORMULA_TOO_COMPLEX')
    assert.equal((await getFormula(srv, 'a^2+b^2=c^2')).res.status, 200)
  })

  test('/formula.png draws the same formula as a PNG, and an error as a PNG too', async (t) => {
    const srv = await startTestServer(t)
    const { res, body } = await getFormula(srv, '\\int_0^1 x^2\\,dx = \\frac{1}{3}', 'png')
    assert.equal(res.status, 200)
    assertImageHeaders(res, 'image/png')
    assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable')
    const info = await imageInfo(body)
    assert.equal(info.format, 'png')
    assert.ok((info.width ?? 0) > 40 && (info.height ?? 0) > 20, JSON.stringify(info))
    const bad = await getFormula(srv, '\\frac{a', 'png')
    assert.equal(bad.res.status, 400)
    assert.equal((await imageInfo(bad.body)).format, 'png')
  })

  test('only GET and HEAD are answered', async (t) => {
    const srv = await startTestServer(t)
    const post = await fetch(formulaUrl(srv, 'x'), { method: 'POST', body: 'x' })
    assert.equal(post.status, 405)
    assert.equal(post.headers.get('allow'), 'GET, HEAD')
    const head = await fetch(formulaUrl(srv, 'x'), { method: 'HEAD' })
    assert.equal(head.status, 200)
    assert.equal(head.headers.get('content-type')?.split(';')[0], 'image/svg+xml')
  })

  test('ue.formula can be mounted at any path ending in .svg or .png', async (t) => {
    const srv = await startTestServer(t)
    const formula = srv.ue.formula
    assert.ok(formula)
    const res = await formula(
      new Request(`http://app.test/math/render.svg?${encodeURIComponent('a_1')}`),
    )
    assert.equal(res.status, 200)
    assert.match(await res.text(), /<svg/)
    assert.equal((await formula(new Request('http://app.test/math/render.gif?x'))).status, 404)
  })

  test('ue.formula mounted on its own carries a request id and refuses new work during a shutdown', async (t) => {
    const srv = await startTestServer(t)
    const formula = srv.ue.formula
    assert.ok(formula)
    const url = `http://app.test/math/render.svg?${encodeURIComponent('b_2')}`
    const res = await formula(new Request(url))
    assert.equal(res.status, 200)
    assert.ok(res.headers.get('x-request-id'))
    srv.ue.stopAccepting()
    const refused = await formula(new Request(url))
    assert.equal(refused.status, 503)
    assert.equal((await refused.json()).error.code, 'UE_SHUTTING_DOWN')
  })
})

describe('formulaConfig in the config answer', () => {
  const PAGE = {
    formulaConfig: {
      imageUrlTemplate: 'https://page.example/render?{}',
      editorMode: 'plain',
      editorLiveServer: 'https://page.example',
    },
  }

  test('points the editor at our renderer in the offline plain mode and leaves the page’s other formula settings alone', async (t) => {
    const srv = await startTestServer(t)
    const config = await (await fetch(srv.action('config'))).json()
    assert.deepEqual(config.formulaConfig, {
      imageUrlTemplate: '/formula.svg?{}',
      editorMode: 'plain',
    })
    const merged = clientMerge(PAGE, config).formulaConfig as typeof PAGE.formulaConfig
    assert.equal(merged.imageUrlTemplate, '/formula.svg?{}')
    assert.equal(merged.editorMode, 'plain')
    assert.equal(merged.editorLiveServer, 'https://page.example')
    // The client's own substitution gives a URL this server renders.
    const src = merged.imageUrlTemplate.replace(/\{\}/, encodeURIComponent('\\alpha+\\beta'))
    const res = await fetch(new URL(src, srv.url))
    assert.equal(res.status, 200)
    assert.match(await res.text(), /<svg/)
  })

  test('is absolute when publicUrl is, keeping a reverse-proxy prefix', async (t) => {
    const srv = await startTestServer(t, { publicUrl: 'https://ue.example.com/uploads/' })
    const config = await (await fetch(srv.action('config'))).json()
    assert.equal(config.formulaConfig.imageUrlTemplate, 'https://ue.example.com/formula.svg?{}')
    const proxied = await startTestServer(t, {
      publicUrl: 'https://www.example.com/api/ueditor/uploads/',
    })
    const c2 = await (await fetch(proxied.action('config'))).json()
    assert.equal(
      c2.formulaConfig.imageUrlTemplate,
      'https://www.example.com/api/ueditor/formula.svg?{}',
    )
  })

  test('with the renderer off, no formulaConfig is sent and the page’s own survives whole', async (t) => {
    const srv = await startTestServer(t, { formula: { enabled: false } })
    const config = await (await fetch(srv.action('config'))).json()
    assert.equal('formulaConfig' in config, false)
    assert.deepEqual(clientMerge(PAGE, config).formulaConfig, PAGE.formulaConfig)
    assert.equal(srv.ue.formula, null)
    assert.equal((await fetch(formulaUrl(srv, 'x'))).status, 404)
  })

  test('sends exactly the formula keys the operator configured', async (t) => {
    const srv = await startTestServer(t, {
      formula: { enabled: false },
      editor: { formulaConfig: { editorMode: 'plain' } },
    })
    const config = await (await fetch(srv.action('config'))).json()
    assert.deepEqual(config.formulaConfig, { editorMode: 'plain' })
    const own = await startTestServer(t, {
      editor: { formulaConfig: { imageUrlTemplate: 'https://math.example.com/svg?{}' } },
    })
    const c2 = await (await fetch(own.action('config'))).json()
    assert.deepEqual(c2.formulaConfig, { imageUrlTemplate: 'https://math.example.com/svg?{}' })
  })
})
