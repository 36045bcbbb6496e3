import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { deflateSync } from 'node:zlib'
import sharp from 'sharp'
import { DEFAULT_PNG_LEVEL, pngLevelFor } from '../../src/images/png-effort.js'
import { png, pngChunk } from '../helpers/fixtures.js'
import { describe, test } from '../helpers/test.js'

/** An RGB PNG of the given rows (each starting with its filter byte) at a zlib level. */
function rgbPng(width: number, height: number, pixels: Buffer, level: number, interlace = 0) {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.set([8, 2, 0, 0, interlace], 8)
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(pixels, { level })),
    pngChunk('IEND', Buffer.alloc(0)),
  ])
}

/** Rows of a horizontal gradient: what screenshots and drawings look like to deflate. */
function gradientRows(width: number, height: number): Buffer {
  const row = width * 3 + 1
  const rows = Buffer.alloc(row * height)
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width * 3; x++) rows[y * row + 1 + x] = (x >> 2) & 0xff
  return rows
}

describe('the zlib level a PNG is re-encoded at', () => {
  test('noise sent uncompressed is written in stored blocks', () => {
    assert.equal(pngLevelFor(png(184, 184, { noise: true })), 0)
  })

  test('noise the sender deflated, without shrinking it, is written in stored blocks', async () => {
    const noisy = await sharp(randomBytes(184 * 184 * 3), {
      raw: { width: 184, height: 184, channels: 3 },
    })
      .png({ compressionLevel: 9 })
      .toBuffer()
    assert.equal(pngLevelFor(noisy), 0)
  })

  test('pixels that compress get the default level even when they were sent uncompressed', () => {
    assert.equal(pngLevelFor(rgbPng(184, 184, gradientRows(184, 184), 0)), DEFAULT_PNG_LEVEL)
  })

  test('an image the sender compressed gets the default level', () => {
    assert.equal(pngLevelFor(rgbPng(184, 184, gradientRows(184, 184), 6)), DEFAULT_PNG_LEVEL)
    assert.equal(pngLevelFor(png(64, 64)), DEFAULT_PNG_LEVEL)
  })

  test('noise with a compressible stretch in its middle gets the default level', () => {
    const rows = randomBytes((184 * 3 + 1) * 184)
    const stretch = (184 * 3 + 1) * 40
    rows.fill(0x80, (rows.length - stretch) >> 1, (rows.length + stretch) >> 1)
    assert.equal(pngLevelFor(rgbPng(184, 184, rows, 0)), DEFAULT_PNG_LEVEL)
  })

  test('an interlaced PNG, a tiny one and bytes that are no PNG get the default level', () => {
    const noise = randomBytes((184 * 3 + 1) * 184)
    assert.equal(pngLevelFor(rgbPng(184, 184, noise, 0, 1)), DEFAULT_PNG_LEVEL)
    assert.equal(pngLevelFor(png(8, 8, { noise: true })), DEFAULT_PNG_LEVEL)
    assert.equal(pngLevelFor(Buffer.from('GIF89a not a png at all, only text')), DEFAULT_PNG_LEVEL)
    assert.equal(pngLevelFor(png(184, 184, { noise: true }).subarray(0, 500)), DEFAULT_PNG_LEVEL)
  })
})
