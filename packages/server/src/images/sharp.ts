import { readFile, rm, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { Sharp } from 'sharp'
import { describeFile, siblingPath, type TempFile, tempFileAt } from '../ingest/temp-file.js'
import { deadline } from '../shared/deadline.js'
import { diskFullCode, storageFull, UeError } from '../shared/errors.js'
import { createFairQueue } from './fair-queue.js'
import { DEFAULT_PNG_LEVEL, pngLevelFor, readPng } from './png-effort.js'
import type { ImagePolicy, ImageProcessor, ImageType, ProcessedImage } from './processor.js'
import { loadSharp } from './sharp-lib.js'

export type WatermarkPosition =
  | 'north'
  | 'northeast'
  | 'east'
  | 'southeast'
  | 'south'
  | 'southwest'
  | 'west'
  | 'northwest'
  | 'center'

export interface SharpProcessorOptions {
  /** Largest accepted width × height (× frames for animations), read from the header. */
  maxPixels: number
  maxFrames: number
  keepMetadata: boolean
  format: 'keep' | 'webp'
  /** JPEG, WebP and AVIF quality, 1-100. */
  quality: number
  /** Images decoded at once. */
  concurrency: number
  /** Decoded pixels in flight at once (bounds memory); one larger image runs alone. */
  maxPixelsInFlight: number
  /** Images waiting for a slot, from all clients and from one client. */
  maxQueued: number
  maxQueuedPerClient: number
  /** Per image, from the moment it is queued: waiting counts too. */
  timeoutSeconds: number
  watermark?: { file: string; position: WatermarkPosition; opacity: number; margin: number }
}

type OutputFormat = 'png' | 'jpeg' | 'gif' | 'webp' | 'avif'

const FORMAT_OF_EXT: Readonly<Record<string, OutputFormat>> = {
  '.png': 'png',
  '.jpg': 'jpeg',
  '.jpeg': 'jpeg',
  '.gif': 'gif',
  '.webp': 'webp',
  '.avif': 'avif',
}
const ANIMATABLE = new Set(['gif', 'webp'])

/**
 * Images up to this size are read into memory once, for the header and the decode: libvips
 * reading the header of a small file from its path cost more CPU than the whole read.
 */
const IN_MEMORY_MAX_BYTES = 4 * 1024 * 1024

/** What sharp reads: the bytes of a small image, the path of a larger one. */
type Input = Buffer | string

interface Watermark {
  /** The mark with its opacity applied and a transparent margin on every side. */
  input: Buffer
  width: number
  height: number
  gravity: WatermarkPosition
}

/**
 * Checks image headers against a pixel budget before anything is decoded, then auto-orients and
 * re-encodes each image in its own format (or WebP), which drops metadata and any bytes hidden
 * after the image data. Decoding is scheduled fairly between clients, weighted by pixels so
 * memory stays bounded, on libvips with one thread and no cache; the time limit runs from the
 * moment an image is queued. BMP (which the bundled libvips cannot decode) is refused.
 */
export async function sharpProcessor(o: SharpProcessorOptions): Promise<ImageProcessor> {
  const watermark = o.watermark ? await loadWatermark(o.watermark) : undefined
  const queue = createFairQueue({
    slots: o.concurrency,
    maxWeight: o.maxPixelsInFlight,
    maxQueued: o.maxQueued,
    maxQueuedPerClient: o.maxQueuedPerClient,
  })

  return {
    handles: (ext) => ext === '.bmp' || ext in FORMAT_OF_EXT,
    get waiting() {
      return queue.queued
    },
    async process(file, type, policy) {
      if (type.ext === '.bmp')
        throw new UeError('UE_TYPE_NOT_ALLOWED', { detail: 'BMP cannot be re-encoded' })
      const started = Date.now()
      const limit = deadline(
        o.timeoutSeconds * 1000,
        () => new UeError('UE_BUSY', { detail: 'image queue wait' }),
      )
      try {
        const input = file.size <= IN_MEMORY_MAX_BYTES ? await readFile(file.path) : file.path
        const header = await readHeader(input, o)
        return await queue.run(policy.client ?? '', header.pixels, limit.signal, () => {
          const left = o.timeoutSeconds - (Date.now() - started) / 1000
          const seconds = Math.max(1, Math.ceil(left))
          return reencode(file, input, type, policy, o, watermark, header, seconds)
        })
      } finally {
        limit.dispose()
      }
    },
  }
}

interface Header {
  width: number
  height: number
  orientation: number | undefined
  animated: boolean
  /** Decoded pixels, all frames together. */
  pixels: number
}

/** Header only: no pixel is decoded here, so the budget is checked before any work is done. */
async function readHeader(input: Input, o: SharpProcessorOptions): Promise<Header> {
  const png = typeof input === 'string' ? undefined : pngHeader(input)
  if (png) {
    if (png.pixels > o.maxPixels) throw new UeError('UE_IMAGE_TOO_LARGE')
    return png
  }
  const sharp = await loadSharp()
  const meta = await sharp(input, { limitInputPixels: false })
    .metadata()
    .catch((cause: unknown) => {
      throw new UeError('UE_CONTENT_MISMATCH', { detail: 'undecodable image', cause })
    })
  const { width, height, format } = meta
  if (!width || !height) throw new UeError('UE_CONTENT_MISMATCH', { detail: 'no dimensions' })
  const animated = (meta.pages ?? 1) > 1 && ANIMATABLE.has(format)
  const frames = animated ? (meta.pages ?? 1) : 1
  const pixels = width * height * frames
  if (frames > o.maxFrames || pixels > o.maxPixels) throw new UeError('UE_IMAGE_TOO_LARGE')
  return { width, height, orientation: meta.orientation, animated, pixels }
}

/**
 * A PNG's header read from its `IHDR` chunk, the same width and height libvips reads (a PNG is
 * one frame to it), which spares a second libvips parse: about a fifth of a small image's
 * re-encode. A PNG with an `eXIf` chunk (an orientation) or that does not parse is left to
 * sharp. The decode still enforces the pixel budget itself (`limitInputPixels`).
 */
function pngHeader(bytes: Buffer): Header | undefined {
  const png = readPng(bytes)
  if (!png || png.exif || png.width === 0 || png.height === 0) return undefined
  const { width, height } = png
  return { width, height, orientation: undefined, animated: false, pixels: width * height }
}

async function reencode(
  file: TempFile,
  input: Input,
  type: ImageType,
  policy: ImagePolicy,
  o: SharpProcessorOptions,
  watermark: Watermark | undefined,
  header: Header,
  timeoutSeconds: number,
): Promise<ProcessedImage> {
  const { width, height, animated } = header
  const output = o.format === 'webp' ? 'webp' : (FORMAT_OF_EXT[type.ext] ?? 'png')
  const out = siblingPath(file)
  let size: number | undefined
  const sharp = await loadSharp()
  try {
    let image = sharp(input, {
      limitInputPixels: o.maxPixels,
      failOn: 'error',
      animated,
    })
      .timeout({ seconds: timeoutSeconds })
      .rotate()
    const { maxLongSide } = policy
    if (maxLongSide)
      image = image.resize({
        width: maxLongSide,
        height: maxLongSide,
        fit: 'inside',
        withoutEnlargement: true,
      })
    if (watermark && policy.watermark && !animated) {
      const [w, h] = finalSize(width, height, header.orientation, maxLongSide)
      if (watermark.width <= w && watermark.height <= h)
        image = image.composite([{ input: watermark.input, gravity: watermark.gravity }])
    }
    if (o.keepMetadata) image = image.keepMetadata()
    if (typeof input === 'string') await encode(image, output, o.quality).toFile(out)
    else {
      // libvips writes a file in 8 KB pieces; a small image goes out in one write instead.
      const pngLevel = output === 'png' ? pngLevelFor(input) : undefined
      const bytes = await encode(image, output, o.quality, pngLevel).toBuffer()
      await writeFile(out, bytes, { flag: 'wx' })
      size = bytes.length
    }
  } catch (cause) {
    await rm(out, { force: true })
    if (cause instanceof UeError) throw cause
    // Writing the copy failed, not decoding: the temp folder's fault, not the image's.
    if (diskFullCode(cause)) throw storageFull('image', dirname(out), cause)
    if ((cause as { syscall?: unknown } | null)?.syscall !== undefined)
      throw new UeError('UE_STORAGE_FAILED', {
        cause,
        context: { at: 'image', folder: dirname(out) },
      })
    const message = cause instanceof Error ? cause.message : ''
    if (/pixel limit|timeout/i.test(message)) throw new UeError('UE_IMAGE_TOO_LARGE', { cause })
    throw new UeError('UE_CONTENT_MISMATCH', { detail: 'undecodable image', cause })
  }
  const ext = o.format === 'webp' ? '.webp' : type.ext
  const stored =
    size === undefined
      ? await describeFile(out, file.originalName)
      : tempFileAt(out, size, file.originalName)
  return { file: stored, ext, mime: `image/${output}` }
}

function encode(
  image: Sharp,
  format: OutputFormat,
  quality: number,
  pngLevel = DEFAULT_PNG_LEVEL,
): Sharp {
  switch (format) {
    case 'jpeg':
      return image.jpeg({ quality })
    case 'webp':
      return image.webp({ quality })
    case 'avif':
      return image.avif({ quality })
    case 'gif':
      return image.gif()
    default:
      return image.png({ compressionLevel: pngLevel })
  }
}

/** The size after auto-orientation and the longest-side cap, rounded down to stay on the safe side. */
function finalSize(
  width: number,
  height: number,
  orientation: number | undefined,
  maxLongSide: number | undefined,
): [number, number] {
  const [w, h] = (orientation ?? 1) >= 5 ? [height, width] : [width, height]
  const scale = maxLongSide ? Math.min(1, maxLongSide / Math.max(w, h)) : 1
  return [Math.floor(w * scale) - 1, Math.floor(h * scale) - 1]
}

async function loadWatermark(
  wm: NonNullable<SharpProcessorOptions['watermark']>,
): Promise<Watermark> {
  try {
    const sharp = await loadSharp()
    const bytes = await readFile(wm.file)
    const { width, height } = await sharp(bytes, { failOn: 'error' }).metadata()
    // dest-in keeps the mark's own shape and scales its alpha, whatever its bands.
    const faded = await sharp(bytes, { failOn: 'error' })
      .ensureAlpha()
      .composite([
        {
          input: {
            create: {
              width,
              height,
              channels: 4,
              background: { r: 0, g: 0, b: 0, alpha: wm.opacity },
            },
          },
          blend: 'dest-in',
        },
      ])
      .png()
      .toBuffer()
    const margin = Math.round(wm.margin)
    const { data, info } = await sharp(faded)
      .extend({
        top: margin,
        bottom: margin,
        left: margin,
        right: margin,
        background: { r: 0, g: 0, b: 0, alpha: 0 },
      })
      .png()
      .toBuffer({ resolveWithObject: true })
    return { input: data, width: info.width, height: info.height, gravity: wm.position }
  } catch (cause) {
    throw new UeError('UE_CONFIG_INVALID', {
      detail: `images.watermark.file: cannot read an image at ${wm.file}`,
      cause,
    })
  }
}
