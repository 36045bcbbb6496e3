import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import { createSvgRasteriser } from '../images/svg-raster.js'
import type { Limiters } from '../limits/limiter.js'
import { CODES, UeError, type UeErrorCode } from '../shared/errors.js'
import { type Locale, messageFor } from '../shared/messages.js'
import { errorResponse } from '../shared/respond.js'
import type { FetchHandler, Logger } from '../shared/types.js'
import { createClientRate } from './client-rate.js'
import { errorSvg } from './error-svg.js'
import { createRenderPool, type RenderOutcome } from './pool.js'

export interface FormulaOptions {
  locale: Locale
  /** Longest TeX accepted, in characters after URL decoding. */
  maxLength: number
  maxMacros: number
  maxBuffer: number
  timeoutMs: number
  workers: number
  maxQueue: number
  memoryMb: number
  /** Bytes of rendered images kept in memory. */
  cacheBytes: number
  /** PNG size relative to the SVG's own (2: twice as many pixels each way). */
  pngScale: number
  /** Largest width × height of a PNG; a larger one gets `UE_FORMULA_TOO_COMPLEX`. */
  pngMaxPixels: number
  /** PNGs drawn at once; each holds a thread of the pool that file I/O shares. */
  pngConcurrency: number
  /** PNGs waiting to be drawn, from all clients together and from one client. */
  pngQueue: number
  pngQueuePerClient: number
  /** Renders (formulas not in the cache) one client may start per minute. 0: no limit. */
  rendersPerMinute: number
  /** Where the per-client render counts are kept (on every node together on PostgreSQL). */
  limiters: Limiters
  /**
   * The client a request comes from (its address, per /64 for IPv6), for the per-client rate
   * and turns; undefined when it is not known, which skips the rate.
   */
  clientOf?: (request: Request) => string | undefined
  log: Logger
}

export interface FormulaStats {
  /** Renders a worker finished or abandoned (cache hits do not count). */
  renders: number
  /** Answers served from the in-memory cache. */
  cacheHits: number
  overruns: number
  /** PNGs waiting to be drawn, drawing now, and the most ever drawing at once. */
  png: { queued: number; drawing: number; peakDrawing: number }
}

export type FormulaHandler = FetchHandler & {
  stats(): FormulaStats
  close(): Promise<void>
}

interface Answer {
  status: number
  body: Uint8Array
  type: 'svg' | 'png'
  etag: string
  code?: UeErrorCode
  cacheControl: string
  /** Kept in the LRU: true for renders and TeX errors, false for refusals that depend on load. */
  keep: boolean
}

const IMMUTABLE = 'public, max-age=31536000, immutable'
// A TeX error may become valid when the server gains a package: browsers re-ask after a day.
const A_DAY = 'public, max-age=86400'
// MathJax lays the SVG out in ex; librsvg takes 1ex as half of its 12pt default font,
// so 96 dpi draws it at its size in a browser with a 16 px font. (Approximate.)
const DENSITY = 96

/**
 * `GET <path>.svg?<URL-encoded TeX>` (and `.png`): TeX rendered on this server, so no formula
 * and no reader's address goes to a third party. Bounded by length, MathJax's macro and buffer
 * limits, a per-render deadline in a worker thread, a queue cap, a per-client rate of renders,
 * a fair queue of PNG drawings with a small global cap, and an LRU of finished answers.
 */
export function createFormulaHandler(o: FormulaOptions): FormulaHandler {
  const pool = createRenderPool({
    workers: o.workers,
    timeoutMs: o.timeoutMs,
    maxQueue: o.maxQueue,
    memoryMb: o.memoryMb,
    limits: { maxMacros: o.maxMacros, maxBuffer: o.maxBuffer },
  })
  const cache = new LRUCache<string, Answer>({
    maxSize: o.cacheBytes,
    sizeCalculation: (a) => Math.max(1, a.body.byteLength),
  })
  const raster = createSvgRasteriser({
    concurrency: o.pngConcurrency,
    maxQueued: o.pngQueue,
    maxQueuedPerClient: o.pngQueuePerClient,
    maxPixels: o.pngMaxPixels,
    timeoutMs: o.timeoutMs,
  })
  const rate = createClientRate(o.limiters, o.rendersPerMinute)
  const inflight = new Map<string, Promise<Answer>>()
  // The few error pictures, drawn once each: a flood of refusals draws nothing.
  const refusalPngs = new Map<UeErrorCode, Promise<Buffer | null>>()
  let cacheHits = 0

  /**
   * The cached answer, the one being rendered, or a new render. A new render started for a
   * known client takes one from its rate (`client` null: an inner lookup, already counted).
   */
  async function answerFor(
    type: 'svg' | 'png',
    tex: string,
    client: string | undefined | null,
  ): Promise<Answer> {
    const key = `${type}\n${tex}`
    const cached = cache.get(key)
    if (cached) {
      cacheHits++
      return cached
    }
    let pending = inflight.get(key)
    if (!pending) {
      // A PNG that could not wait its turn is refused before MathJax works on it.
      if (type === 'png' && !raster.hasRoom(client ?? '')) return refusal(type, 'UE_FORMULA_BUSY')
      if (client && !(await rate.take(client))) return refusal(type, 'UE_FORMULA_RATE_LIMITED')
      pending = (type === 'svg' ? renderSvg(tex) : renderPng(tex, client ?? '')).finally(() =>
        inflight.delete(key),
      )
      inflight.set(key, pending)
    }
    const answer = await pending
    if (answer.keep) cache.set(key, answer)
    return answer
  }

  async function renderSvg(tex: string): Promise<Answer> {
    const outcome: RenderOutcome = await pool.render(tex)
    switch (outcome.kind) {
      case 'svg':
        return svgAnswer(200, outcome.svg, IMMUTABLE, true)
      case 'tex-error':
        return svgAnswer(400, outcome.svg, A_DAY, true, 'UE_FORMULA_INVALID')
      case 'unsafe':
        o.log.debug({ detail: outcome.detail }, 'formula refused')
        return refusal('svg', 'UE_FORMULA_INVALID')
      case 'too-complex':
        return refusal('svg', 'UE_FORMULA_TOO_COMPLEX')
      case 'busy':
        return refusal('svg', 'UE_FORMULA_BUSY')
      default:
        o.log.error({ detail: outcome.message }, 'formula render failed')
        return refusal('svg', 'UE_INTERNAL')
    }
  }

  async function renderPng(tex: string, client: string): Promise<Answer> {
    const svg = await answerFor('svg', tex, null)
    // Past MathJax's own errors, a refusal shows the same picture for every formula.
    if (svg.code && svg.code !== 'UE_FORMULA_INVALID') return refusal('png', svg.code)
    let png: Buffer
    try {
      png = await raster.draw(client, new TextDecoder().decode(svg.body), DENSITY * o.pngScale)
    } catch (err) {
      if (err instanceof UeError && err.code === 'UE_BUSY') return refusal('png', 'UE_FORMULA_BUSY')
      if (!(err instanceof UeError)) o.log.warn({ err }, 'formula PNG not drawn')
      return refusal('png', 'UE_FORMULA_TOO_COMPLEX')
    }
    return { ...svg, type: 'png', body: png, etag: etagOf(png) }
  }

  function refusalPng(code: UeErrorCode, svg: string): Promise<Buffer | null> {
    let png = refusalPngs.get(code)
    if (!png) {
      png = raster.drawUnqueued(svg, DENSITY * o.pngScale).catch((err: unknown) => {
        o.log.warn({ err }, 'formula error picture not drawn')
        refusalPngs.delete(code)
        return null
      })
      refusalPngs.set(code, png)
    }
    return png
  }

  async function refusal(type: 'svg' | 'png', code: UeErrorCode): Promise<Answer> {
    const svg = errorSvg(messageFor(o.locale, code))
    const status = CODES[code].status
    const png = type === 'png' ? await refusalPng(code, svg) : null
    const cacheControl =
      code === 'UE_FORMULA_INVALID' || code === 'UE_FORMULA_TOO_LONG' ? A_DAY : 'no-store'
    const keep = code === 'UE_FORMULA_INVALID'
    if (png) return { status, body: png, type, etag: etagOf(png), code, cacheControl, keep }
    return svgAnswer(status, svg, cacheControl, keep, code)
  }

  const handler: FetchHandler = async (request) => {
    const url = new URL(request.url)
    const type = url.pathname.endsWith('.svg')
      ? 'svg'
      : url.pathname.endsWith('.png')
        ? 'png'
        : null
    if (!type) return errorResponse(new UeError('UE_NOT_FOUND'))
    const raw = url.search.slice(1)
    let answer: Answer
    // Each character is at most 12 URL-encoded bytes (a 4-byte UTF-8 sequence): cheap pre-check.
    if (raw.length > o.maxLength * 12) answer = await refusal(type, 'UE_FORMULA_TOO_LONG')
    else {
      const tex = decode(raw)
      if (tex === null || tex.trim() === '') answer = await refusal(type, 'UE_FORMULA_INVALID')
      else if ([...tex].length > o.maxLength) answer = await refusal(type, 'UE_FORMULA_TOO_LONG')
      else answer = await answerFor(type, tex.trim(), o.clientOf?.(request))
    }
    return respond(request, answer)
  }

  return Object.assign(handler, {
    stats: (): FormulaStats => ({
      renders: pool.stats.renders + pool.stats.overruns,
      cacheHits,
      overruns: pool.stats.overruns,
      png: raster.stats,
    }),
    close: () => pool.close(),
  })
}

function decode(raw: string): string | null {
  try {
    return decodeURIComponent(raw)
  } catch {
    return null
  }
}

function svgAnswer(
  status: number,
  svg: string,
  cacheControl: string,
  keep: boolean,
  code?: UeErrorCode,
): Answer {
  const body = new TextEncoder().encode(svg)
  const answer: Answer = { status, body, type: 'svg', etag: etagOf(body), cacheControl, keep }
  if (code) answer.code = code
  return answer
}

function etagOf(body: Uint8Array): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`
}

function respond(request: Request, a: Answer): Response {
  const headers = new Headers({
    'Content-Type': a.type === 'svg' ? 'image/svg+xml; charset=utf-8' : 'image/png',
    'X-Content-Type-Options': 'nosniff',
    // The SVG's own <style> (error colours, table rules) is the only thing it may use.
    'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
    'Cross-Origin-Resource-Policy': 'cross-origin',
    'Cache-Control': a.cacheControl,
    ETag: a.etag,
  })
  if (a.code) headers.set('X-UEditor-Error', a.code)
  if (a.status === 200 && request.headers.get('if-none-match') === a.etag)
    return new Response(null, { status: 304, headers })
  const body = request.method === 'HEAD' ? null : (a.body as Uint8Array<ArrayBuffer>)
  headers.set('Content-Length', String(a.body.byteLength))
  return new Response(body, { status: a.status, headers })
}
