import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { png } from '../helpers/fixtures.js'
import { imageInfo } from '../helpers/images.js'
import { uploadFrom } from '../helpers/post-from.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, type TestContext, test } from '../helpers/test.js'

interface Got {
  status: number
  type: string
  code: string | undefined
  cacheControl: string | undefined
  body: Buffer
}

/** A GET from a chosen loopback address (the whole of 127/8 is local on Linux): another client. */
function getFrom(url: string, agent: Agent): Promise<Got> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          type: String(res.headers['content-type']),
          code: res.headers['x-ueditor-error'] as string | undefined,
          cacheControl: res.headers['cache-control'],
          body: Buffer.concat(chunks),
        }),
      )
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

const clientAt = (localAddress: string) =>
  new Agent({ keepAlive: true, localAddress, maxSockets: 64 })

const formulaPng = (srv: TestServer, tex: string) =>
  `${srv.url}/formula.png?${encodeURIComponent(tex)}`

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}
const mib = (bytes: number) => Math.round(bytes / 2 ** 20)

async function siteWithSmallFile(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ue-formula-site-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  await writeFile(join(dir, 'small.txt'), 'abc')
  return dir
}

describe('formula PNG floods', () => {
  test('distinct large formulas from 32 parallel requests get drawn one at a time or refused readably, while another client uploads and reads a static file', {
    timeout: 120_000,
  }, async (t) => {
    const site = await siteWithSmallFile(t)
    // A deadline well past a drawing's time on a busy machine: the bounds, not the clock, refuse.
    const srv = await startTestServer(t, { site: { dir: site }, formula: { timeoutMs: 10_000 } })
    const formula = srv.ue.formula
    assert.ok(formula)
    const { pngConcurrency, pngQueue } = srv.ue.config.formula
    const flooders = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'].map(clientAt)
    const reader = clientAt('127.0.0.9')
    t.after(() => {
      for (const agent of [...flooders, reader]) agent.destroy()
    })
    const rssBefore = process.memoryUsage.rss()

    // 32 requests in flight: 4 client addresses × 8, each a new formula of about 3.6 megapixels
    // as a PNG (under formula.pngMaxPixels), for a bounded time.
    // Every loop ends by the clock, so nothing keeps running if the test itself is cut short.
    const until = Date.now() + 8_500
    const answers = new Map<string, number>()
    let n = 0
    let peakRss = rssBefore
    let peakQueued = 0
    const floodOne = async (agent: Agent) => {
      while (Date.now() < until) {
        const got = await getFrom(formulaPng(srv, `\\rule{550pt}{500.${n++}pt}`), agent)
        const what = `${got.status} ${got.code ?? 'ok'}`
        answers.set(what, (answers.get(what) ?? 0) + 1)
        assert.equal(got.type, 'image/png', what)
        assert.equal((await imageInfo(got.body)).format, 'png', what)
        if (got.status !== 200) assert.equal(got.cacheControl, 'no-store', what)
      }
    }
    const flood = flooders.flatMap((agent) => Array.from({ length: 8 }, () => floodOne(agent)))
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage.rss())
      peakQueued = Math.max(peakQueued, formula.stats().png?.queued ?? 0)
    }, 50)
    t.after(() => clearInterval(sampler))

    // Meanwhile another client uploads a 100 KB image and reads a 3-byte static file, in turn.
    const uploadMs: number[] = []
    const staticMs: number[] = []
    const image = png(180, 180, { noise: true })
    await sleep(500)
    while (Date.now() < until) {
      let began = performance.now()
      const up = await uploadFrom(srv, '127.0.0.9', [
        { name: 'upfile', filename: 'other.png', value: image },
      ])
      uploadMs.push(performance.now() - began)
      assert.equal(up.state, 'SUCCESS', JSON.stringify(up))
      began = performance.now()
      const small = await getFrom(`${srv.url}/small.txt`, reader)
      staticMs.push(performance.now() - began)
      assert.equal(small.status, 200)
      assert.equal(small.body.toString(), 'abc')
    }
    await Promise.all(flood)
    clearInterval(sampler)
    await sleep(2_000)
    const rssAfter = process.memoryUsage.rss()

    const stats = formula.stats()
    t.diagnostic(`formula answers: ${JSON.stringify(Object.fromEntries(answers))}`)
    t.diagnostic(
      `other client, ${uploadMs.length} uploads of ${Math.round(image.length / 1024)} KB: ` +
        `median ${median(uploadMs).toFixed(0)} ms, max ${Math.max(...uploadMs).toFixed(0)} ms`,
    )
    t.diagnostic(
      `other client, ${staticMs.length} reads of a 3-byte static file: ` +
        `median ${median(staticMs).toFixed(0)} ms, max ${Math.max(...staticMs).toFixed(0)} ms`,
    )
    t.diagnostic(
      `RSS of the test process: ${mib(rssBefore)} MiB before, ${mib(peakRss)} MiB at most, ` +
        `${mib(rssAfter)} MiB 2 s after; PNGs drawing at once at most: ${stats.png?.peakDrawing}, ` +
        `waiting at most: ${peakQueued}; MathJax renders: ${stats.renders}`,
    )

    assert.ok(uploadMs.length >= 1 && staticMs.length >= 1)
    assert.ok((answers.get('200 ok') ?? 0) >= 1, 'no formula was served')
    assert.ok(
      (answers.get('503 UE_FORMULA_BUSY') ?? 0) >= 1,
      'the flood was never refused: the drawing queue grew without bound',
    )
    assert.deepEqual(
      [...answers.keys()].filter(
        (k) => !['200 ok', '503 UE_FORMULA_BUSY', '429 UE_FORMULA_RATE_LIMITED'].includes(k),
      ),
      [],
    )
    assert.ok(stats.png.peakDrawing >= 1, 'no PNG was drawn')
    assert.ok(
      stats.png.peakDrawing <= pngConcurrency,
      `${stats.png.peakDrawing} PNGs drawn at once, over formula.pngConcurrency`,
    )
    assert.ok(peakQueued <= pngQueue, `${peakQueued} PNGs waited, over formula.pngQueue`)
    // Once the flood is over, a new formula is drawn at once.
    const after = await getFrom(formulaPng(srv, 'e^{i\\pi} + 1 = 0'), reader)
    assert.equal(after.status, 200)
  })

  test('past formula.rendersPerMinute a client gets UE_FORMULA_RATE_LIMITED for new formulas, while cached ones and other clients are served', async (t) => {
    const srv = await startTestServer(t, { formula: { rendersPerMinute: 3 } })
    const busy = clientAt('127.0.0.2')
    const other = clientAt('127.0.0.3')
    t.after(() => {
      busy.destroy()
      other.destroy()
    })
    for (const tex of ['a^2', 'b^2', 'c^2'])
      assert.equal((await getFrom(formulaPng(srv, tex), busy)).status, 200, tex)
    const limited = await getFrom(formulaPng(srv, 'd^2'), busy)
    assert.equal(limited.status, 429)
    assert.equal(limited.code, 'UE_FORMULA_RATE_LIMITED')
    assert.equal(limited.type, 'image/png')
    assert.equal(limited.cacheControl, 'no-store')
    const limitedSvg = await getFrom(`${srv.url}/formula.svg?${encodeURIComponent('f^2')}`, busy)
    assert.equal(limitedSvg.status, 429)
    assert.match(limitedSvg.type, /^image\/svg\+xml/)
    assert.equal((await getFrom(formulaPng(srv, 'a^2'), busy)).status, 200, 'a cached formula')
    assert.equal((await getFrom(formulaPng(srv, 'd^2'), other)).status, 200, 'another client')
  })

  test('a PNG larger than formula.pngMaxPixels is refused as too complex without being drawn; the SVG is still served', async (t) => {
    const srv = await startTestServer(t)
    const formula = srv.ue.formula
    assert.ok(formula)
    // 1100 × 1000 pt at twice its size: about 14.4 megapixels.
    const tex = '\\rule{1100pt}{1000pt}'
    const got = await fetch(formulaPng(srv, tex))
    assert.equal(got.status, 422)
    assert.equal(got.headers.get('x-ueditor-error'), 'UE_FORMULA_TOO_COMPLEX')
    assert.equal((await imageInfo(Buffer.from(await got.arrayBuffer()))).format, 'png')
    assert.equal(formula.stats().png.peakDrawing, 0, 'nothing was drawn')
    const svg = await fetch(`${srv.url}/formula.svg?${encodeURIComponent(tex)}`)
    assert.equal(svg.status, 200)
  })
})
