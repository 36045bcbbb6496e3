import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { siblingPath, tempFileAt } from '../ingest/temp-file.js'
import { deadline } from '../shared/deadline.js'
import { UeError } from '../shared/errors.js'
import { METAFILE_EXTS, metafileBounds, unpackMetafile } from '../shared/metafile-header.js'
import { createFairQueue } from './fair-queue.js'
import type { ImageProcessor } from './processor.js'
import { loadSharp } from './sharp-lib.js'
import { findSoffice, sofficeToSvg } from './soffice.js'

export interface MetafileOptions {
  /** The LibreOffice executable, or null when none is installed. */
  soffice: string | null
  /** Where each conversion gets its own folder (the uploads' temp folder). */
  tempDir: string
  /** The image pipeline's cap, applied to the bounds a header declares before converting. */
  maxPixels: number
  /** Largest unpacked EMZ/WMZ and largest drawing LibreOffice may write, in bytes. */
  maxBytes: number
  /** Conversions at once, and waiting (all clients, one client); past either: UE_BUSY. */
  concurrency: number
  maxQueued: number
  maxQueuedPerClient: number
  /** Per picture, from the moment it is queued. */
  timeoutSeconds: number
}

/**
 * The image pipeline with Word pictures: an EMF/WMF (or gzipped EMZ/WMZ) is checked against the
 * pixel cap from its header, converted by LibreOffice to SVG in a folder of its own, cut to the
 * picture's own bounds and drawn as a transparent PNG, which then goes through `inner` like any
 * uploaded PNG. Conversions take turns between clients on the pipeline's fair queue.
 */
export function withMetafiles(inner: ImageProcessor, o: MetafileOptions): ImageProcessor {
  const queue = createFairQueue({
    slots: o.concurrency,
    maxWeight: o.concurrency,
    maxQueued: o.maxQueued,
    maxQueuedPerClient: o.maxQueuedPerClient,
  })
  const isMetafile = (ext: string) => METAFILE_EXTS.includes(ext)
  return {
    handles: (ext) => isMetafile(ext) || inner.handles(ext),
    get waiting() {
      return queue.queued + (inner.waiting ?? 0)
    },
    async process(file, type, policy) {
      if (!isMetafile(type.ext)) return inner.process(file, type, policy)
      if (!o.soffice) throw new UeError('UE_CONVERTER_UNAVAILABLE')
      const soffice = o.soffice
      const bytes = await unpackMetafile(type.ext, await readFile(file.path), o.maxBytes)
      const bounds = metafileBounds(bytes)
      if (bounds.width * bounds.height > o.maxPixels)
        throw new UeError('UE_IMAGE_TOO_LARGE', {
          detail: `metafile of ${bounds.width}×${bounds.height} pixels`,
        })
      const started = Date.now()
      const limit = deadline(
        o.timeoutSeconds * 1000,
        () => new UeError('UE_BUSY', { detail: 'metafile queue wait' }),
      )
      let png: Buffer
      try {
        png = await queue.run(policy.client ?? '', 1, limit.signal, async () => {
          limit.dispose()
          const left = o.timeoutSeconds * 1000 - (Date.now() - started)
          const work = await mkdtemp(join(o.tempDir, 'metafile-'))
          try {
            const input = join(work, `picture.${bounds.kind}`)
            await writeFile(input, bytes, { flag: 'wx' })
            const svg = await sofficeToSvg(soffice, input, work, Math.max(1000, left), o.maxBytes)
            return await drawAtBounds(svg, bounds.width, bounds.height, o.maxPixels)
          } finally {
            await rm(work, { recursive: true, force: true })
          }
        })
      } finally {
        limit.dispose()
      }
      const out = siblingPath(file)
      await writeFile(out, png, { flag: 'wx' })
      const drawn = tempFileAt(out, png.length, file.originalName)
      const pngType = { ext: '.png', mime: 'image/png' }
      try {
        const done = await inner.process(drawn, pngType, policy)
        if (done.file !== drawn) await drawn.dispose()
        return done.file === drawn ? { ...done, ...pngType } : done
      } catch (e) {
        await drawn.dispose()
        throw e
      }
    },
  }
}

/**
 * LibreOffice draws the picture on a page: the SVG's root is cut to the picture's bounding box
 * (its first `Graphic` shape) and sized to the header's bounds, so the PNG is the picture alone,
 * transparent where it draws nothing.
 */
async function drawAtBounds(
  svg: string,
  width: number,
  height: number,
  maxPixels: number,
): Promise<Buffer> {
  const at = svg.indexOf('class="Graphic"')
  const box =
    at < 0
      ? null
      : /<rect class="BoundingBox"[^>]*?\sx="(-?\d+)" y="(-?\d+)" width="(\d+)" height="(\d+)"/.exec(
          svg.slice(at, at + 4096),
        )
  if (!box) throw new UeError('UE_CONVERSION_FAILED', { detail: 'no picture in the drawing' })
  const root = /<svg\b[^>]*>/.exec(svg)
  if (!root) throw new UeError('UE_CONVERSION_FAILED', { detail: 'no drawing' })
  const newRoot = root[0]
    .replace(/\swidth="[^"]*"/, ` width="${width}px"`)
    .replace(/\sheight="[^"]*"/, ` height="${height}px"`)
    .replace(/\sviewBox="[^"]*"/, ` viewBox="${box[1]} ${box[2]} ${box[3]} ${box[4]}"`)
    .replace(/\spreserveAspectRatio="[^"]*"/, ' preserveAspectRatio="none"')
  const cut = svg.slice(0, root.index) + newRoot + svg.slice(root.index + root[0].length)
  let png: Buffer
  try {
    // At sharp's default density an SVG pixel is one PNG pixel.
    const sharp = await loadSharp()
    png = await sharp(Buffer.from(cut), { limitInputPixels: maxPixels })
      .timeout({ seconds: 10 })
      .ensureAlpha()
      .png()
      .toBuffer()
  } catch (cause) {
    throw new UeError('UE_CONVERSION_FAILED', { detail: 'drawing not drawable', cause })
  }
  // Broken records often leave LibreOffice with an empty picture: nothing to store.
  const { channels } = await (await loadSharp())(png).stats()
  if ((channels[3]?.max ?? 0) === 0)
    throw new UeError('UE_CONVERSION_FAILED', { detail: 'nothing drawn' })
  return png
}

/** The converter's options from the server config: LibreOffice where `soffice` points, if found. */
export function metafileOptions(config: {
  images: {
    maxPixels: number
    metafiles: {
      enabled: boolean
      soffice: string
      concurrency: number
      maxQueued: number
      maxQueuedPerClient: number
      timeoutSeconds: number
    }
  }
  uploads: { tempDir: string }
}): MetafileOptions {
  const { metafiles, maxPixels } = config.images
  return {
    soffice: metafiles.enabled ? findSoffice(metafiles.soffice) : null,
    tempDir: config.uploads.tempDir,
    maxPixels,
    maxBytes: 64 * 1024 * 1024,
    concurrency: metafiles.concurrency,
    maxQueued: metafiles.maxQueued,
    maxQueuedPerClient: metafiles.maxQueuedPerClient,
    timeoutSeconds: metafiles.timeoutSeconds,
  }
}
