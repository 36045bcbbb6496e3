import type { Entry, ZipFile } from 'yauzl'
import { UeError } from '../shared/errors.js'
import { importOptional } from '../shared/optional-deps.js'

/** The caps a `.docx` is unpacked under (`word.*` in the config). */
export interface PackageLimits {
  /** All parts together, counted as they unpack. */
  maxUnpackedBytes: number
  /** Unpacked/packed of one part larger than `RATIO_FLOOR`. */
  maxRatio: number
  maxEntries: number
}

/** Parts smaller than this are not held to the ratio: a short XML part of repeats packs tightly. */
const RATIO_FLOOR = 1024 * 1024

/** The unpacked parts of a checked `.docx`, by name (only these are ever read). */
export interface DocxPackage {
  parts: ReadonlyMap<string, Buffer>
}

const unsafe = (detail: string) => new UeError('UE_WORD_ARCHIVE_UNSAFE', { detail })

/**
 * Opens a `.docx` with yauzl and checks it before anything reads it: the central directory
 * first (entry count, declared sizes and ratios), then every part as it unpacks, counting the
 * bytes that actually come out. Refused: macros (a `vbaProject.bin`, a macro-enabled content
 * type), a DOCTYPE or ENTITY in any XML part, zip-level encryption, and anything past the caps.
 */
export async function readDocxPackage(path: string, limits: PackageLimits): Promise<DocxPackage> {
  const yauzl = await importOptional('yauzl', 'editor.wordImportActionName', () => import('yauzl'))
  const zip = await new Promise<ZipFile>((resolve, reject) =>
    yauzl.default.open(
      path,
      { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false },
      (err, zf) => (err || !zf ? reject(invalid(err)) : resolve(zf)),
    ),
  )
  try {
    if (zip.entryCount > limits.maxEntries)
      throw unsafe(`${zip.entryCount} parts, more than ${limits.maxEntries}`)
    const entries = await centralDirectory(zip)
    let declared = 0
    for (const entry of entries) {
      checkName(entry.fileName)
      if ((entry.generalPurposeBitFlag & 1) !== 0)
        throw new UeError('UE_WORD_ENCRYPTED', { detail: 'encrypted zip entries' })
      declared += entry.uncompressedSize
      if (declared > limits.maxUnpackedBytes)
        throw unsafe(`unpacks to more than ${limits.maxUnpackedBytes} bytes`)
      if (
        entry.uncompressedSize > RATIO_FLOOR &&
        entry.uncompressedSize > limits.maxRatio * Math.max(entry.compressedSize, 1)
      )
        throw unsafe(`a part unpacks more than ${limits.maxRatio} times its packed size`)
    }
    const parts = new Map<string, Buffer>()
    const budget = { left: limits.maxUnpackedBytes }
    for (const entry of entries) {
      if (entry.fileName.endsWith('/')) continue
      const bytes = await unpack(zip, entry, budget)
      checkPart(entry.fileName, bytes)
      parts.set(entry.fileName, bytes)
    }
    if (!parts.has('word/document.xml') && !hasMainDocument(parts))
      throw new UeError('UE_WORD_INVALID', { detail: 'no document part' })
    return { parts }
  } finally {
    zip.close()
  }
}

function invalid(cause: unknown): UeError {
  return new UeError('UE_WORD_INVALID', { detail: 'not a readable zip', cause })
}

function centralDirectory(zip: ZipFile): Promise<Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: Entry[] = []
    zip.on('entry', (entry: Entry) => {
      entries.push(entry)
      zip.readEntry()
    })
    zip.once('end', () => resolve(entries))
    zip.once('error', (e) => reject(invalid(e)))
    zip.readEntry()
  })
}

/** One part's bytes, counted as they come out against what is left of the budget. */
function unpack(zip: ZipFile, entry: Entry, budget: { left: number }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (err, stream) => {
      if (err || !stream) return reject(invalid(err))
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => {
        budget.left -= chunk.length
        if (budget.left < 0) {
          stream.destroy()
          reject(unsafe('unpacks to more than its declared sizes allow'))
          return
        }
        chunks.push(chunk)
      })
      stream.once('error', (e) =>
        reject(
          e instanceof UeError ? e : unsafe(`a part does not unpack as declared: ${e.message}`),
        ),
      )
      stream.once('end', () => resolve(Buffer.concat(chunks)))
    })
  })
}

const MACRO_PART = /(^|\/)(vbaProject\.bin|vbaData\.xml)$/i
const MACRO_TYPE = /macroEnabled|vbaProject|ms-office\.vba/i

function checkName(name: string): void {
  if (MACRO_PART.test(name)) throw new UeError('UE_WORD_MACROS', { detail: name })
}

/** XML parts (and the content types, and relationships) may declare no DTD and no entity. */
function checkPart(name: string, bytes: Buffer): void {
  if (!/\.(xml|rels|vml)$/i.test(name)) return
  // A part may be UTF-16: dropping the NULs reads both encodings' ASCII the same way.
  const text = bytes.toString('latin1').replace(/\0/g, '')
  if (/<!\s*(DOCTYPE|ENTITY)/i.test(text))
    throw new UeError('UE_WORD_ENTITIES', { detail: `${name} declares a DTD or entity` })
  if (name === '[Content_Types].xml' && MACRO_TYPE.test(text))
    throw new UeError('UE_WORD_MACROS', { detail: 'a macro-enabled content type' })
}

/** A package whose main part is elsewhere (named in `_rels/.rels`); mammoth finds it there. */
function hasMainDocument(parts: ReadonlyMap<string, Buffer>): boolean {
  const rels = parts.get('_rels/.rels')?.toString('utf8') ?? ''
  return /officeDocument"[^>]*Target="[^"]+"|Target="[^"]+"[^>]*officeDocument"/.test(rels)
}
