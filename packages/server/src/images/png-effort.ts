import { deflateRawSync } from 'node:zlib'

/** zlib's default level, which sharp uses for PNG: the level every compressible image gets. */
export const DEFAULT_PNG_LEVEL = 6
/** Stored deflate blocks: the pixels as they are, for data no level can shrink. */
const STORED = 0

/** Below this ratio of deflated to plain bytes, data counts as compressible. */
const COMPRESSIBLE_BELOW = 0.95
/** Bytes taken at the start, middle and end of stored pixels and deflated together to probe them. */
const PROBE_SLICE = 2048

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
/** Samples per pixel by PNG colour type: grey, RGB, palette, grey + alpha, RGBA. */
const SAMPLES: Readonly<Record<number, number>> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }

/**
 * The zlib level to re-encode a PNG at. Deflating pixels that do not compress (noise, a photo's
 * grain) costs most of a small image's re-encode and saves nothing, so they are written in
 * stored blocks, which come out within a few bytes of what the default level makes of them.
 * Pixels count as not compressible only when the image data the client sent is as large as the
 * pixels it holds, and either its deflate stream is compressed (the sender's encoder tried and
 * could not shrink it) or it is stored and deflating 2 KB from its start, middle and end at the
 * fastest level does not shrink them either. Every other PNG, and any this cannot read, keeps
 * the default level.
 */
export function pngLevelFor(bytes: Buffer): number {
  const png = readPng(bytes)
  if (!png || png.interlaced) return DEFAULT_PNG_LEVEL
  const samples = SAMPLES[png.colourType]
  if (samples === undefined) return DEFAULT_PNG_LEVEL
  const rowBytes = 1 + Math.ceil((png.width * samples * png.bitDepth) / 8)
  const { data } = png
  // The sender's encoder made the pixels smaller: they compress.
  if (data.length < COMPRESSIBLE_BELOW * rowBytes * png.height) return DEFAULT_PNG_LEVEL
  // After the 2-byte zlib header, the first block's type: 0 is stored (not compressed).
  const firstBlockType = ((data[2] ?? 0) >> 1) & 3
  if (firstBlockType !== 0) return STORED
  const pixels = data.subarray(7) // the zlib header and the stored block's own header
  if (pixels.length < 3 * PROBE_SLICE) return DEFAULT_PNG_LEVEL
  const middle = (pixels.length - PROBE_SLICE) >> 1
  const end = pixels.length - PROBE_SLICE
  const sample = Buffer.concat([
    pixels.subarray(0, PROBE_SLICE),
    pixels.subarray(middle, middle + PROBE_SLICE),
    pixels.subarray(end),
  ])
  const deflated = deflateRawSync(sample, { level: 1 }).length
  return deflated < COMPRESSIBLE_BELOW * sample.length ? DEFAULT_PNG_LEVEL : STORED
}

export interface PngFacts {
  width: number
  height: number
  bitDepth: number
  colourType: number
  interlaced: boolean
  /** The `IDAT` chunks joined: the zlib stream of the pixels. */
  data: Buffer
  /** Whether an `eXIf` chunk is present (it may hold an orientation). */
  exif: boolean
}

/** The header facts and image data of a PNG, or undefined when the bytes are not one. */
export function readPng(bytes: Buffer): PngFacts | undefined {
  if (bytes.length < 33 || !bytes.subarray(0, SIGNATURE.length).equals(SIGNATURE)) return undefined
  if (bytes.toString('latin1', 12, 16) !== 'IHDR') return undefined
  const facts = {
    width: bytes.readUInt32BE(16),
    height: bytes.readUInt32BE(20),
    bitDepth: bytes[24] ?? 0,
    colourType: bytes[25] ?? 0,
    interlaced: bytes[28] !== 0,
  }
  const parts: Buffer[] = []
  let exif = false
  for (let at = SIGNATURE.length; at + 8 <= bytes.length; ) {
    const length = bytes.readUInt32BE(at)
    const type = bytes.toString('latin1', at + 4, at + 8)
    const start = at + 8
    if (start + length > bytes.length) return undefined
    if (type === 'IDAT') parts.push(bytes.subarray(start, start + length))
    if (type === 'eXIf') exif = true
    if (type === 'IEND') break
    at = start + length + 4
  }
  if (parts.length === 0) return undefined
  return {
    ...facts,
    data: parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts),
    exif,
  }
}
