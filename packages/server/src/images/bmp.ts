import { createReadStream, createWriteStream } from 'node:fs'
import { open } from 'node:fs/promises'
import { pipeline } from 'node:stream/promises'
import { describeFile, siblingPath, type TempFile } from '../ingest/temp-file.js'
import { UeError } from '../shared/errors.js'

export interface BmpHeader {
  width: number
  height: number
  /** `bfSize`: the length the file says it has (0 when the writer left it out). */
  declaredSize: number
}

/** Reads the BITMAPFILEHEADER and the size fields of the DIB header; null if it is not a BMP. */
export async function readBmpHeader(path: string): Promise<BmpHeader | null> {
  const handle = await open(path, 'r')
  try {
    const head = Buffer.alloc(26)
    const { bytesRead } = await handle.read(head, 0, head.length, 0)
    if (bytesRead < 26 || head.toString('latin1', 0, 2) !== 'BM') return null
    const dibSize = head.readUInt32LE(14)
    const core = dibSize === 12
    return {
      width: core ? head.readUInt16LE(18) : Math.abs(head.readInt32LE(18)),
      height: core ? head.readUInt16LE(20) : Math.abs(head.readInt32LE(22)),
      declaredSize: head.readUInt32LE(2),
    }
  } finally {
    await handle.close()
  }
}

/**
 * BMP cannot be decoded by the image library, so it is stored as uploaded after a header check,
 * cut to the length its header declares: bytes appended after the bitmap are dropped.
 */
export async function sanitiseBmp(file: TempFile, maxPixels: number): Promise<TempFile> {
  const header = await readBmpHeader(file.path)
  if (!header || header.width === 0 || header.height === 0)
    throw new UeError('UE_CONTENT_MISMATCH', { detail: 'not a readable BMP' })
  if (header.width * header.height > maxPixels) throw new UeError('UE_IMAGE_TOO_LARGE')
  if (header.declaredSize < 26 || header.declaredSize >= file.size) return file
  const out = siblingPath(file)
  await pipeline(
    createReadStream(file.path, { start: 0, end: header.declaredSize - 1 }),
    createWriteStream(out, { flags: 'wx' }),
  )
  return describeFile(out, file.originalName)
}
