import { deflateSync } from 'node:zlib'
import sharp from 'sharp'
import { pngChunk } from './fixtures.js'

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/** A PNG whose header declares `width` × `height` but holds almost no pixel data. */
export function pngDeclaring(width: number, height: number, extra: Buffer[] = []): Buffer {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.set([8, 2, 0, 0, 0], 8)
  return Buffer.concat([
    PNG_SIGNATURE,
    pngChunk('IHDR', header),
    ...extra,
    pngChunk('IDAT', deflateSync(Buffer.alloc(width * 3 + 1))),
    pngChunk('IEND', Buffer.alloc(0)),
  ])
}

/** A PNG text chunk (`zTXt`) holding `bytes` of compressed zeros. */
export function zTxtChunk(bytes: number): Buffer {
  return pngChunk(
    'zTXt',
    Buffer.concat([Buffer.from('Comment\0\0', 'latin1'), deflateSync(Buffer.alloc(bytes))]),
  )
}

/** A hand-made GIF89a: a `width` × `height` screen and `frames` frames of the same size. */
export function gifDeclaring(width: number, height: number, frames = 1): Buffer {
  const screen = Buffer.alloc(7)
  screen.writeUInt16LE(width, 0)
  screen.writeUInt16LE(height, 2)
  screen[4] = 0x80 // a global colour table of two entries
  const parts = [Buffer.from('GIF89a', 'latin1'), screen, Buffer.from([0, 0, 0, 255, 255, 255])]
  for (let i = 0; i < frames; i++) {
    const descriptor = Buffer.alloc(10)
    descriptor[0] = 0x2c
    descriptor.writeUInt16LE(width, 5)
    descriptor.writeUInt16LE(height, 7)
    parts.push(Buffer.from([0x21, 0xf9, 4, 0, 10, 0, 0, 0]), descriptor)
    parts.push(Buffer.from([2, 2, 0x44, 0x01, 0]))
  }
  parts.push(Buffer.from([0x3b]))
  return Buffer.concat(parts)
}

/** A real small JPEG whose SOF marker is rewritten to declare `width` × `height`. */
export async function jpegDeclaring(width: number, height: number): Promise<Buffer> {
  const jpeg = await solid(8, 8).jpeg().toBuffer()
  for (let i = 2; i < jpeg.length; ) {
    const marker = jpeg[i + 1] as number
    if (marker >= 0xc0 && marker <= 0xc2) {
      jpeg.writeUInt16BE(height, i + 5)
      jpeg.writeUInt16BE(width, i + 7)
      return jpeg
    }
    i += 2 + jpeg.readUInt16BE(i + 2)
  }
  throw new Error('no SOF marker')
}

/** A real lossless WebP whose VP8L header is rewritten to declare `width` × `height`. */
export async function webpDeclaring(width: number, height: number): Promise<Buffer> {
  const webp = await solid(1, 1).webp({ lossless: true }).toBuffer()
  if (webp.toString('latin1', 12, 16) !== 'VP8L') throw new Error('not VP8L')
  const bits = (width - 1) | ((height - 1) << 14)
  webp.writeUInt32LE(((webp.readUInt32LE(21) & 0xf0000000) | bits) >>> 0, 21)
  return webp
}

/** A 24-bit bottom-up BMP filled with one grey. */
export function bmp(width: number, height: number): Buffer {
  const row = Math.ceil((width * 3) / 4) * 4
  const pixels = Buffer.alloc(row * height, 0x80)
  const header = Buffer.alloc(54)
  header.write('BM', 0, 'latin1')
  header.writeUInt32LE(54 + pixels.length, 2)
  header.writeUInt32LE(54, 10)
  header.writeUInt32LE(40, 14)
  header.writeInt32LE(width, 18)
  header.writeInt32LE(height, 22)
  header.writeUInt16LE(1, 26)
  header.writeUInt16LE(24, 28)
  header.writeUInt32LE(pixels.length, 34)
  return Buffer.concat([header, pixels])
}

/** A sharp pipeline over a plain colour canvas. */
export function solid(
  width: number,
  height: number,
  background: string | { r: number; g: number; b: number; alpha?: number } = 'white',
) {
  return sharp({ create: { width, height, channels: 3, background } })
}

/** An animated GIF of one frame per colour. */
export async function animatedGif(width: number, height: number, colours: string[]) {
  const frames = await Promise.all(colours.map((c) => solid(width, height, c).png().toBuffer()))
  return sharp(frames, { join: { animated: true } })
    .gif()
    .toBuffer()
}

/** A JPEG shot "sideways" (EXIF orientation 6) with a camera make and a GPS position. */
export async function jpegWithExif(width: number, height: number): Promise<Buffer> {
  return solid(width, height, 'red')
    .jpeg()
    .withExif({
      IFD0: { Make: 'SecretCam' },
      IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 2400/100' },
    })
    .withMetadata({ orientation: 6 })
    .toBuffer()
}

export async function imageInfo(bytes: Buffer) {
  const m = await sharp(bytes).metadata()
  return {
    format: m.format,
    width: m.width,
    height: m.height,
    pages: m.pages ?? 1,
    exif: m.exif !== undefined,
  }
}

/** The RGB of one pixel. */
export async function pixel(bytes: Buffer, x: number, y: number): Promise<number[]> {
  const { data, info } = await sharp(bytes)
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true })
  const at = (y * info.width + x) * info.channels
  return [...data.subarray(at, at + 3)]
}
