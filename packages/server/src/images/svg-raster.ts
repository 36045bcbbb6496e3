import { deadline } from '../shared/deadline.js'
import { UeError } from '../shared/errors.js'
import { createFairQueue } from './fair-queue.js'
import { loadSharp } from './sharp-lib.js'

export interface SvgRasteriserOptions {
  /**
   * Drawings at once. Each holds a thread of libuv's pool (four by default), which every file
   * read and write of the process shares, for as long as it draws.
   */
  concurrency: number
  /** Drawings waiting, from all clients together and from one client. */
  maxQueued: number
  maxQueuedPerClient: number
  /** Largest width × height of a PNG, checked from the SVG's declared size before drawing. */
  maxPixels: number
  /** How long a drawing may wait for its turn, and then how long it may take. */
  timeoutMs: number
}

export interface SvgRasteriser {
  /**
   * Draws an SVG the server made itself (never an uploaded one) as a PNG at `density` pixels per
   * CSS inch (96: its own size). Refuses with `UE_IMAGE_TOO_LARGE` when its declared size is over
   * the pixel cap or unreadable, before it is queued. Waits its turn among the clients, and
   * refuses with `UE_BUSY` when the queues are full or the wait outlives the time limit.
   */
  draw(client: string, svg: string, density: number): Promise<Buffer>
  /**
   * Draws at once, outside the queue: only for the server's own few small pictures (the error
   * images), which the caller draws once and keeps.
   */
  drawUnqueued(svg: string, density: number): Promise<Buffer>
  /** Whether a drawing for `client` would wait its turn now rather than be refused. */
  hasRoom(client: string): boolean
  /** Drawings waiting and drawing now, and the most ever drawing at once, for tests and metrics. */
  readonly stats: { queued: number; drawing: number; peakDrawing: number }
}

/**
 * Drawing is scheduled by the image pipeline's fair queue, so a flood of distinct formulas takes
 * at most `concurrency` of the pool's threads and one client's backlog never delays another's
 * next drawing by more than one drawing per client. libvips runs with one thread and no cache.
 */
export function createSvgRasteriser(o: SvgRasteriserOptions): SvgRasteriser {
  const queue = createFairQueue({
    slots: o.concurrency,
    maxWeight: o.concurrency,
    maxQueued: o.maxQueued,
    maxQueuedPerClient: o.maxQueuedPerClient,
  })
  const seconds = Math.max(1, Math.ceil(o.timeoutMs / 1000))
  let drawing = 0
  let peakDrawing = 0
  const toPng = async (svg: string, density: number) =>
    (await loadSharp())(Buffer.from(svg), { density, limitInputPixels: o.maxPixels })
      .timeout({ seconds })
      .png()
      .toBuffer()

  return {
    get stats() {
      return { queued: queue.queued, drawing, peakDrawing }
    },
    async draw(client, svg, density) {
      const pixels = declaredPixels(svg, density)
      if (pixels === undefined || pixels > o.maxPixels)
        throw new UeError('UE_IMAGE_TOO_LARGE', { detail: `PNG of ${pixels ?? '?'} pixels` })
      const wait = deadline(
        o.timeoutMs,
        () => new UeError('UE_BUSY', { detail: 'formula drawing queue wait' }),
      )
      try {
        return await queue.run(client, 1, wait.signal, async () => {
          wait.dispose()
          drawing++
          peakDrawing = Math.max(peakDrawing, drawing)
          try {
            return await toPng(svg, density)
          } finally {
            drawing--
          }
        })
      } finally {
        wait.dispose()
      }
    },
    drawUnqueued: toPng,
    hasRoom: (client) => queue.hasRoom(client),
  }
}

// What librsvg takes for the units a root <svg> may give its size in, in CSS pixels: its default
// font is 12pt, so 1em is 16px and 1ex half of that.
const CSS_PIXELS: Readonly<Record<string, number>> = {
  '': 1,
  px: 1,
  pt: 96 / 72,
  pc: 16,
  in: 96,
  cm: 96 / 2.54,
  mm: 96 / 25.4,
  em: 16,
  ex: 8,
}

/** Width × height of the PNG that `svg` gives at `density`, from its root element's attributes. */
export function declaredPixels(svg: string, density: number): number | undefined {
  const root = /<svg\b[^>]*>/.exec(svg)?.[0]
  if (!root) return undefined
  const side = (name: string): number | undefined => {
    const m = new RegExp(
      `\\s${name}="\\s*([0-9]*\\.?[0-9]+)\\s*(px|pt|pc|in|cm|mm|em|ex)?\\s*"`,
    ).exec(root)
    const scale = CSS_PIXELS[m?.[2] ?? '']
    if (!m || scale === undefined) return undefined
    return Math.ceil((Number(m[1]) * scale * density) / 96)
  }
  const width = side('width')
  const height = side('height')
  return width === undefined || height === undefined ? undefined : width * height
}
