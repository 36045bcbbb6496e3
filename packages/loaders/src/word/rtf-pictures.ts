/**
 * The pictures of an RTF text (what Word puts on the clipboard as `text/rtf`), in document
 * order, each counted once. Pure: no DOM, no I/O.
 */

export type RtfPictureFormat = 'png' | 'jpeg' | 'emf' | 'wmf' | 'other'

export interface RtfPicture {
  format: RtfPictureFormat
  /** The picture's bytes as the RTF holds them (a WMF without its placeable header). */
  bytes: Uint8Array
  /** `\picw`, `\pich`: for metafiles the size in 0.01 mm, for bitmaps as the writer put it. */
  picw?: number
  pich?: number
  /** `\picwgoal`, `\pichgoal`: the size before scaling and cropping, in twips. */
  goalWidth?: number
  goalHeight?: number
  /** `\picscalex`, `\picscaley` in percent (100 when absent). */
  scaleX: number
  scaleY: number
  /** `\piccropl/r/t/b` in twips (0 when absent; negative adds a border). */
  crop: { left: number; right: number; top: number; bottom: number }
  /** The mapping mode of `\wmetafileN`. */
  mappingMode?: number
}

const FORMAT_OF_WORD: Record<string, RtfPictureFormat> = {
  pngblip: 'png',
  jpegblip: 'jpeg',
  emfblip: 'emf',
  wmetafile: 'wmf',
  dibitmap: 'other',
  wbitmap: 'other',
  macpict: 'other',
  pmmetafile: 'other',
}

/**
 * Groups holding another rendering of a picture counted elsewhere: Word writes each picture
 * twice, `{\*\shppict{\pict …png…}}{\nonshppict{\pict …wmf…}}`, and a shape's `\shprslt` repeats
 * the picture its `pib` property holds.
 */
const ALTERNATES = new Set(['nonshppict', 'shprslt'])

/** `\*` destinations that may hold the picture itself; every other `\*` group is skipped. */
const STAR_ENTERED = new Set(['shppict', 'shpinst'])

interface Group {
  skip: boolean
  /** No control word read yet in this group. */
  first: boolean
  star: boolean
  /** The picture this group is the `\pict` group of. */
  pict?: Builder
  /** Inside a picture, in a group of its own (`{\*\blipuid …}`): not picture data. */
  inPicture: boolean
}

interface Builder {
  picture: Omit<RtfPicture, 'bytes'>
  bytes: Uint8Array
  length: number
  /** A hex digit waiting for its pair, or -1. */
  high: number
}

/** Every picture of `rtf`, in document order; a text that is not RTF has none. */
export function rtfPictures(rtf: string): RtfPicture[] {
  const pictures: RtfPicture[] = []
  const stack: Group[] = [{ skip: false, first: false, star: false, inPicture: false }]
  const n = rtf.length
  let i = 0
  while (i < n) {
    const c = rtf.charCodeAt(i)
    const top = stack[stack.length - 1] as Group
    if (c === 0x7b /* { */) {
      stack.push({
        skip: top.skip,
        first: true,
        star: false,
        inPicture: top.inPicture || top.pict !== undefined,
      })
      i++
    } else if (c === 0x7d /* } */) {
      if (stack.length > 1) stack.pop()
      if (top.pict && !top.skip) pictures.push(finish(top.pict))
      i++
    } else if (c === 0x5c /* \ */) {
      i = controlAt(rtf, i, top)
    } else {
      if (top.pict && !top.skip) addHex(top.pict, c)
      i++
    }
  }
  return pictures
}

/** Reads the control word or symbol at `i` (a backslash) and answers the index after it. */
function controlAt(rtf: string, i: number, group: Group): number {
  const next = rtf.charCodeAt(i + 1)
  if (!isLetter(next)) {
    if (next === 0x2a /* * */ && group.first) group.star = true
    // `\'hh` carries two hex digits of text, never picture data.
    return next === 0x27 /* ' */ ? i + 4 : i + 2
  }
  let j = i + 1
  while (j < rtf.length && isLetter(rtf.charCodeAt(j)) && j - i <= 32) j++
  const word = rtf.slice(i + 1, j)
  let param: number | undefined
  const signStart = j
  if (rtf.charCodeAt(j) === 0x2d /* - */ && isDigit(rtf.charCodeAt(j + 1))) j++
  if (isDigit(rtf.charCodeAt(j))) {
    while (j < rtf.length && isDigit(rtf.charCodeAt(j))) j++
    param = Number(rtf.slice(signStart, j))
  } else j = signStart
  if (rtf.charCodeAt(j) === 0x20) j++

  if (word === 'bin') {
    // Raw bytes follow, braces and backslashes included: never read them as RTF.
    const count = Math.max(0, param ?? 0)
    const end = Math.min(rtf.length, j + count)
    if (group.pict && !group.skip) for (let k = j; k < end; k++) push(group.pict, rtf.charCodeAt(k))
    return end
  }
  if (group.first) {
    group.first = false
    if (ALTERNATES.has(word) || (group.star && !STAR_ENTERED.has(word))) group.skip = true
  }
  if (group.skip) return j
  if (word === 'pict' && !group.inPicture && !group.pict) {
    group.pict = {
      picture: { format: 'other', scaleX: 100, scaleY: 100, crop: zeroCrop() },
      bytes: new Uint8Array(1024),
      length: 0,
      high: -1,
    }
  } else if (group.pict) {
    pictureProperty(group.pict.picture, word, param)
  }
  return j
}

function pictureProperty(p: Omit<RtfPicture, 'bytes'>, word: string, param: number | undefined) {
  const format = FORMAT_OF_WORD[word]
  if (format) {
    p.format = format
    if (word === 'wmetafile' && param !== undefined) p.mappingMode = param
    return
  }
  if (param === undefined) return
  switch (word) {
    case 'picw':
      p.picw = param
      break
    case 'pich':
      p.pich = param
      break
    case 'picwgoal':
      p.goalWidth = param
      break
    case 'pichgoal':
      p.goalHeight = param
      break
    case 'picscalex':
      p.scaleX = param
      break
    case 'picscaley':
      p.scaleY = param
      break
    case 'piccropl':
      p.crop.left = param
      break
    case 'piccropr':
      p.crop.right = param
      break
    case 'piccropt':
      p.crop.top = param
      break
    case 'piccropb':
      p.crop.bottom = param
      break
  }
}

const zeroCrop = () => ({ left: 0, right: 0, top: 0, bottom: 0 })
const isLetter = (c: number) => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a)
const isDigit = (c: number) => c >= 0x30 && c <= 0x39

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30
  if (c >= 0x61 && c <= 0x66) return c - 0x57
  if (c >= 0x41 && c <= 0x46) return c - 0x37
  return -1
}

/** Hex digits are the picture's bytes; line breaks and other text between them are not. */
function addHex(b: Builder, c: number) {
  const v = hexValue(c)
  if (v < 0) return
  if (b.high < 0) b.high = v
  else {
    push(b, (b.high << 4) | v)
    b.high = -1
  }
}

function push(b: Builder, byte: number) {
  if (b.length === b.bytes.length) {
    const grown = new Uint8Array(b.bytes.length * 2)
    grown.set(b.bytes)
    b.bytes = grown
  }
  b.bytes[b.length++] = byte & 0xff
}

function finish(b: Builder): RtfPicture {
  return { ...b.picture, bytes: b.bytes.slice(0, b.length) }
}

const TWIPS_PER_PX = 15

/**
 * The size the picture is shown at in the document, in CSS pixels: its goal size less the crop,
 * times the scale. Without a goal size a metafile's `\picw`/`\pich` (0.01 mm) stand in; a
 * bitmap without one has no known size.
 */
export function displaySize(p: RtfPicture): { width: number; height: number } | undefined {
  const goal = goalSize(p)
  if (!goal) return undefined
  const width = ((goal.width - p.crop.left - p.crop.right) * p.scaleX) / 100 / TWIPS_PER_PX
  const height = ((goal.height - p.crop.top - p.crop.bottom) * p.scaleY) / 100 / TWIPS_PER_PX
  if (!(width > 0 && height > 0)) return undefined
  return { width: Math.max(1, Math.round(width)), height: Math.max(1, Math.round(height)) }
}

/** The uncropped, unscaled size in twips. */
function goalSize(p: RtfPicture): { width: number; height: number } | undefined {
  if (p.goalWidth && p.goalHeight && p.goalWidth > 0 && p.goalHeight > 0)
    return { width: p.goalWidth, height: p.goalHeight }
  if ((p.format === 'emf' || p.format === 'wmf') && p.picw && p.pich && p.picw > 0 && p.pich > 0)
    return { width: (p.picw * 1440) / 2540, height: (p.pich * 1440) / 2540 }
  return undefined
}

/**
 * The crop as fractions of the picture's width and height (each in [0, 1), a negative crop, a
 * border, counts as none), or undefined when nothing is cut away or the goal size is unknown.
 */
export function cropFractions(
  p: RtfPicture,
): { left: number; right: number; top: number; bottom: number } | undefined {
  const goal = goalSize(p)
  if (!goal) return undefined
  const f = (twips: number, of: number) => Math.min(Math.max(0, twips / of), 1)
  const c = {
    left: f(p.crop.left, goal.width),
    right: f(p.crop.right, goal.width),
    top: f(p.crop.top, goal.height),
    bottom: f(p.crop.bottom, goal.height),
  }
  if (c.left + c.right >= 1 || c.top + c.bottom >= 1) return undefined
  return c.left || c.right || c.top || c.bottom ? c : undefined
}

const PLACEABLE_KEY = 0x9ac6cdd7

/**
 * A WMF file from an RTF `\wmetafile`: RTF holds the metafile without the placeable header that
 * tells a reader its bounds and units, so one is put in front, built from the metafile's own
 * window origin and extent and the picture's size (twips, else 0.01 mm). Bytes that already
 * start with the header are answered as they are.
 */
export function wmfFile(p: RtfPicture): Uint8Array {
  const b = p.bytes
  if (b.length >= 4 && readU32(b, 0) === PLACEABLE_KEY) return b
  const window = windowOf(b)
  const goal = goalSize(p)
  let left = 0
  let top = 0
  let right: number
  let bottom: number
  let inch: number
  if (window && window.ext[0] !== 0 && window.ext[1] !== 0) {
    left = window.org[0]
    top = window.org[1]
    right = left + window.ext[0]
    bottom = top + window.ext[1]
    const twips = goal?.width ?? 0
    inch = twips > 0 ? Math.round((Math.abs(window.ext[0]) * 1440) / twips) : 1440
  } else {
    right = Math.round(goal?.width ?? 1440)
    bottom = Math.round(goal?.height ?? 1440)
    inch = 1440
  }
  const header = new Uint8Array(22)
  const view = new DataView(header.buffer)
  view.setUint32(0, PLACEABLE_KEY, true)
  view.setInt16(6, clamp16(left), true)
  view.setInt16(8, clamp16(top), true)
  view.setInt16(10, clamp16(right), true)
  view.setInt16(12, clamp16(bottom), true)
  view.setUint16(14, Math.min(Math.max(1, inch), 0xffff), true)
  let sum = 0
  for (let k = 0; k < 10; k++) sum ^= view.getUint16(k * 2, true)
  view.setUint16(20, sum, true)
  const file = new Uint8Array(22 + b.length)
  file.set(header)
  file.set(b, 22)
  return file
}

/** The first SETWINDOWORG and SETWINDOWEXT of a standard WMF, as [x, y]. */
function windowOf(b: Uint8Array): { org: [number, number]; ext: [number, number] } | undefined {
  if (b.length < 18) return undefined
  const headerWords = u8(b, 2) | (u8(b, 3) << 8)
  let at = headerWords * 2
  const org: [number, number] = [0, 0]
  let ext: [number, number] | undefined
  for (let records = 0; at + 6 <= b.length && records < 10_000; records++) {
    const words = readU32(b, at)
    const fn = u8(b, at + 4) | (u8(b, at + 5) << 8)
    if (words < 3 || fn === 0) break
    if (at + 10 <= b.length) {
      const y = readI16(b, at + 6)
      const x = readI16(b, at + 8)
      if (fn === 0x020b) {
        org[0] = x
        org[1] = y
      } else if (fn === 0x020c && !ext) ext = [x, y]
    }
    at += words * 2
  }
  return ext ? { org, ext } : undefined
}

const u8 = (b: Uint8Array, at: number) => b[at] ?? 0
const readU32 = (b: Uint8Array, at: number) =>
  (u8(b, at) | (u8(b, at + 1) << 8) | (u8(b, at + 2) << 16) | (u8(b, at + 3) << 24)) >>> 0
const readI16 = (b: Uint8Array, at: number) => ((u8(b, at) | (u8(b, at + 1) << 8)) << 16) >> 16
const clamp16 = (v: number) => Math.min(Math.max(Math.round(v), -32768), 32767)
