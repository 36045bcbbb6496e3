import { gunzip } from 'node:zlib'
import { UeError } from './errors.js'

/** The Word picture extensions: Windows and Enhanced Metafiles, plain or gzipped. */
export const METAFILE_EXTS: readonly string[] = ['.emf', '.wmf', '.emz', '.wmz']

export type MetafileKind = 'emf' | 'wmf'

/** CSS pixels per inch: a picture is drawn at its own size, as a browser shows it. */
const PX_PER_INCH = 96

/** Which metafile the first bytes are, or null. EMZ and WMZ are recognised as gzip here. */
export function metafileKind(head: Uint8Array): MetafileKind | 'gzip' | null {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'gzip'
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength)
  // EMR_HEADER: record type 1, then ' EMF' at offset 40.
  if (head.length >= 88 && view.getUint32(0, true) === 1 && view.getUint32(40, true) === 0x464d4520)
    return 'emf'
  if (head.length >= 22 && view.getUint32(0, true) === 0x9ac6cdd7) return 'wmf'
  // A standard WMF header: type 1 (memory) or 2 (disk), header of 9 words, version 0x100/0x300.
  if (head.length >= 18) {
    const type = view.getUint16(0, true)
    const words = view.getUint16(2, true)
    const version = view.getUint16(4, true)
    if ((type === 1 || type === 2) && words === 9 && (version === 0x100 || version === 0x300))
      return 'wmf'
  }
  return null
}

/** The dotted extension a metafile's bytes agree with: EMZ/WMZ are gzip on their head. */
export function metafileExtAgrees(ext: string, head: Uint8Array): boolean {
  const kind = metafileKind(head)
  if (ext === '.emf') return kind === 'emf'
  if (ext === '.wmf') return kind === 'wmf'
  if (ext === '.emz' || ext === '.wmz') return kind === 'gzip'
  return false
}

/**
 * The bytes of an EMZ/WMZ unpacked, refused with `UE_IMAGE_TOO_LARGE` past `maxBytes` (a small
 * gzip can unpack to gigabytes); plain metafiles are returned as they are.
 */
export async function unpackMetafile(
  ext: string,
  bytes: Buffer,
  maxBytes: number,
): Promise<Buffer> {
  if (ext !== '.emz' && ext !== '.wmz') return bytes
  const inner = await new Promise<Buffer>((resolve, reject) =>
    gunzip(bytes, { maxOutputLength: maxBytes }, (error, out) => {
      if (!error) resolve(out)
      else if (
        error instanceof RangeError ||
        (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE'
      )
        reject(new UeError('UE_IMAGE_TOO_LARGE', { detail: 'metafile unpacks past the limit' }))
      else reject(new UeError('UE_CONTENT_MISMATCH', { detail: 'broken gzip', cause: error }))
    }),
  )
  const want = ext === '.emz' ? 'emf' : 'wmf'
  if (metafileKind(inner) !== want)
    throw new UeError('UE_CONTENT_MISMATCH', { detail: `gzip does not hold a ${want}` })
  return inner
}

export interface MetafileBounds {
  kind: MetafileKind
  /** The picture's own size in CSS pixels, from its header. */
  width: number
  height: number
}

/**
 * The picture's size from its header, before anything draws it: an EMF's frame (hundredths of a
 * millimetre), a placeable WMF's box and units per inch, a standard WMF's first window extent
 * (taken at 1440 units per inch, the twips Word writes). Broken or empty bounds: UE_CONTENT_MISMATCH.
 */
export function metafileBounds(bytes: Buffer): MetafileBounds {
  const kind = metafileKind(bytes)
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const broken = (detail: string) => new UeError('UE_CONTENT_MISMATCH', { detail })
  if (kind === 'emf') {
    const size = view.getUint32(4, true)
    const total = view.getUint32(48, true)
    if (size < 88 || size > bytes.length || total > bytes.length) throw broken('broken EMF header')
    const l = view.getInt32(24, true)
    const t = view.getInt32(28, true)
    const r = view.getInt32(32, true)
    const b = view.getInt32(36, true)
    return sized('emf', ((r - l) / 2540) * PX_PER_INCH, ((b - t) / 2540) * PX_PER_INCH, broken)
  }
  if (kind === 'wmf') {
    if (view.getUint32(0, true) === 0x9ac6cdd7) {
      const l = view.getInt16(6, true)
      const t = view.getInt16(8, true)
      const r = view.getInt16(10, true)
      const b = view.getInt16(12, true)
      const inch = view.getUint16(14, true)
      if (inch === 0 || bytes.length < 22 + 18) throw broken('broken WMF header')
      return sized(
        'wmf',
        (Math.abs(r - l) / inch) * PX_PER_INCH,
        (Math.abs(b - t) / inch) * PX_PER_INCH,
        broken,
      )
    }
    // Records after the 18-byte header: size in words (4 bytes), function (2 bytes).
    for (let at = 18, n = 0; at + 6 <= bytes.length && n < 64; n++) {
      const words = view.getUint32(at, true)
      const fn = view.getUint16(at + 4, true)
      if (fn === 0x020c && at + 10 <= bytes.length) {
        const h = view.getInt16(at + 6, true)
        const w = view.getInt16(at + 8, true)
        return sized(
          'wmf',
          (Math.abs(w) / 1440) * PX_PER_INCH,
          (Math.abs(h) / 1440) * PX_PER_INCH,
          broken,
        )
      }
      if (words < 3 || fn === 0) break
      at += words * 2
    }
    throw broken('WMF without a window extent')
  }
  throw broken('not a metafile')
}

function sized(
  kind: MetafileKind,
  w: number,
  h: number,
  broken: (d: string) => UeError,
): MetafileBounds {
  const width = Math.ceil(Math.abs(w))
  const height = Math.ceil(Math.abs(h))
  if (!Number.isFinite(width) || !Number.isFinite(height) || width < 1 || height < 1)
    throw broken('empty metafile bounds')
  return { kind, width, height }
}
