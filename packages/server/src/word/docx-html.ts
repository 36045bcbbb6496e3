import { posix } from 'node:path'
import { UeError } from '../shared/errors.js'
import { importOptional } from '../shared/optional-deps.js'
import type { DocxPackage } from './package.js'

/** A picture of the document, as its package holds it; `src` in the HTML is `pictureSrc(index)`. */
export interface DocxPicture {
  /** The package part it came from (`word/media/image1.png`). */
  part: string
  bytes: Buffer
}

export interface DocxHtml {
  /** Mammoth's HTML; each picture's `src` is `pictureSrc(i)`, a dropped one's `DROPPED_SRC`. */
  html: string
  pictures: DocxPicture[]
  /** Pictures not in the package (linked to a file or an address): never read, left out. */
  dropped: number
}

/** The placeholder of picture `index` until it is stored. */
export const pictureSrc = (index: number) => `ue-word-picture:${index}`
/** The placeholder of a picture left out. */
export const DROPPED_SRC = 'ue-word-picture:dropped'

/** Bold and italic are mammoth's own; underline is left out unless mapped. */
const STYLE_MAP = ['u => u']

/**
 * The document as HTML, through mammoth, reading only the parts `pkg` already unpacked and
 * checked (mammoth never opens the zip itself) and never a file outside it (`externalFileAccess`
 * off; a linked picture is left out). Each picture of the package is handed over once, however
 * often the document shows it, with its width and height from the drawing's extent.
 */
export async function docxToHtml(pkg: DocxPackage, maxPictures: number): Promise<DocxHtml> {
  const mammoth = await importOptional(
    'mammoth',
    'editor.wordImportActionName',
    () => import('mammoth'),
  )
  const sizes = pictureSizes(pkg)
  const pictures: DocxPicture[] = []
  const byPart = new Map<string, number>()
  let dropped = 0
  let tooMany = false
  // The part mammoth reads next: its image reads are synchronous up to our `read`.
  let reading: string | undefined
  const file = {
    exists: (name: string) => pkg.parts.has(name),
    read: async (name: string, encoding?: string) => {
      reading = name
      const bytes = pkg.parts.get(name)
      if (!bytes) throw new Error(`no part ${name}`)
      if (encoding === 'base64') return bytes.toString('base64')
      if (encoding) return new TextDecoder(encoding).decode(bytes)
      return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    },
  }
  const convertImage = mammoth.default.images.imgElement(async (image) => {
    reading = undefined
    const read = image.readAsBuffer()
    const part = reading
    try {
      await read
    } catch {
      dropped++
      return { src: DROPPED_SRC }
    }
    if (part === undefined) {
      dropped++
      return { src: DROPPED_SRC }
    }
    let index = byPart.get(part)
    if (index === undefined) {
      if (pictures.length >= maxPictures) {
        tooMany = true
        return { src: DROPPED_SRC }
      }
      index = pictures.length
      pictures.push({ part, bytes: pkg.parts.get(part) as Buffer })
      byPart.set(part, index)
    }
    const size = sizes.get(part)?.shift()
    return size
      ? { src: pictureSrc(index), width: String(size.width), height: String(size.height) }
      : { src: pictureSrc(index) }
  })
  let result: { value: string }
  try {
    result = await mammoth.default.convertToHtml(
      // mammoth takes an opened package in place of a path or buffer.
      { file } as unknown as { buffer: Buffer },
      { convertImage, styleMap: STYLE_MAP, externalFileAccess: false },
    )
  } catch (cause) {
    throw new UeError('UE_WORD_INVALID', { detail: 'mammoth could not read it', cause })
  }
  if (tooMany)
    throw new UeError('UE_WORD_TOO_MANY_PICTURES', {
      detail: `more than ${maxPictures} pictures`,
    })
  return { html: result.value, pictures, dropped }
}

interface Size {
  width: number
  height: number
}

const EMU_PER_PIXEL = 9525

/**
 * The size each picture is shown at, from the main document: a DrawingML picture's `wp:extent`
 * (EMU) and a VML picture's `width`/`height` style (pt), in CSS pixels, by package part, in
 * document order (a part shown twice may have two sizes).
 */
function pictureSizes(pkg: DocxPackage): Map<string, Size[]> {
  const sizes = new Map<string, Size[]>()
  const main = 'word/document.xml'
  const xml = pkg.parts.get(main)?.toString('utf8')
  if (!xml) return sizes
  const targets = relationshipTargets(pkg, main)
  const add = (id: string | undefined, width: number, height: number) => {
    const part = id === undefined ? undefined : targets.get(id)
    if (!part || !(width > 0) || !(height > 0)) return
    const list = sizes.get(part) ?? []
    list.push({ width: Math.round(width), height: Math.round(height) })
    sizes.set(part, list)
  }
  for (const m of xml.matchAll(/<wp:(inline|anchor)\b[\s\S]*?<\/wp:\1>/g)) {
    const drawing = m[0]
    const extent = /<wp:extent\b[^>]*\bcx="(\d+)"[^>]*\bcy="(\d+)"/.exec(drawing)
    const blip = /<a:blip\b[^>]*\br:embed="([^"]+)"/.exec(drawing)
    if (extent && blip)
      add(blip[1], Number(extent[1]) / EMU_PER_PIXEL, Number(extent[2]) / EMU_PER_PIXEL)
  }
  for (const m of xml.matchAll(/<v:shape\b([^>]*)>([\s\S]*?)<\/v:shape>/g)) {
    const style = /\bstyle="([^"]*)"/.exec(m[1] as string)?.[1] ?? ''
    const id = /<v:imagedata\b[^>]*\br:id="([^"]+)"/.exec(m[2] as string)?.[1]
    add(id, cssPixels(style, 'width'), cssPixels(style, 'height'))
  }
  return sizes
}

/** Relationship id → package part, for the relationships of `part` that stay inside the package. */
function relationshipTargets(pkg: DocxPackage, part: string): Map<string, string> {
  const dir = posix.dirname(part)
  const rels = pkg.parts.get(`${dir}/_rels/${posix.basename(part)}.rels`)?.toString('utf8') ?? ''
  const targets = new Map<string, string>()
  for (const m of rels.matchAll(/<Relationship\b[^>]*>/g)) {
    const tag = m[0]
    if (/TargetMode="External"/i.test(tag)) continue
    const id = /\bId="([^"]+)"/.exec(tag)?.[1]
    const target = /\bTarget="([^"]+)"/.exec(tag)?.[1]
    if (!id || !target) continue
    // Named as mammoth names the part it reads.
    targets.set(id, target.startsWith('/') ? target.slice(1) : `${dir}/${target}`)
  }
  return targets
}

const UNITS: Record<string, number> = { pt: 96 / 72, px: 1, in: 96, cm: 96 / 2.54, mm: 96 / 25.4 }

function cssPixels(style: string, name: string): number {
  const m = new RegExp(`(?:^|;)\\s*${name}\\s*:\\s*([\\d.]+)(pt|px|in|cm|mm)`, 'i').exec(style)
  return m ? Number(m[1]) * (UNITS[(m[2] as string).toLowerCase()] ?? 0) : 0
}
