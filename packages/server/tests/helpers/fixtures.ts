import { randomBytes } from 'node:crypto'
import { crc32, deflateSync } from 'node:zlib'

/** One PNG chunk: length, type, data and CRC. */
export function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([length, body, crc])
}

/** A valid RGB PNG; `noise` makes it incompressible, so its size is about w × h × 3 bytes. */
export function png(width = 1, height = 1, o: { noise?: boolean } = {}): Buffer {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.set([8, 2, 0, 0, 0], 8)
  const row = width * 3 + 1
  const raw = o.noise ? randomBytes(row * height) : Buffer.alloc(row * height, 0x80)
  for (let y = 0; y < height; y++) raw[y * row] = 0
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(raw, { level: o.noise ? 0 : 6 })),
    pngChunk('IEND', Buffer.alloc(0)),
  ])
}

/** A 1×1 GIF89a. */
export const GIF = Buffer.from(
  'R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==',
  'base64',
)

/** The start of an ISO-BMFF MP4 (what magic-byte sniffing reads), padded with zeros. */
export const MP4 = Buffer.concat([
  Buffer.from([0, 0, 0, 0x18]),
  Buffer.from('ftypmp42', 'latin1'),
  Buffer.from([0, 0, 0, 0]),
  Buffer.from('mp42isom', 'latin1'),
  Buffer.alloc(64),
])

/** An MP3 that starts with an ID3v2 tag. */
export const MP3 = Buffer.concat([
  Buffer.from('ID3', 'latin1'),
  Buffer.from([3, 0, 0, 0, 0, 0, 0]),
  Buffer.from([0xff, 0xfb, 0x90, 0x64]),
  Buffer.alloc(410),
])

export const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n', 'latin1')

export const HTML = Buffer.from('<html><script>alert(document.domain)</script></html>')

export function blob(bytes: Buffer, type = 'application/octet-stream'): Blob {
  return new Blob([new Uint8Array(bytes)], { type })
}
