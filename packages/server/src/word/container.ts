import { UeError } from '../shared/errors.js'

/** What a Word file's first bytes say it is. */
export type WordContainer = 'zip' | 'cfb'

const ZIP = Buffer.from([0x50, 0x4b, 0x03, 0x04])
const CFB = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])

/** `.docx` is a zip, `.doc` an OLE compound file (CFB); anything else is not a Word document. */
export function containerOf(head: Uint8Array): WordContainer {
  const bytes = Buffer.from(head.buffer, head.byteOffset, head.byteLength)
  if (bytes.subarray(0, 4).equals(ZIP)) return 'zip'
  if (bytes.subarray(0, 8).equals(CFB)) return 'cfb'
  throw new UeError('UE_WORD_INVALID', { detail: 'neither a zip nor a compound file' })
}

/**
 * Checks a compound file by the names in its directory: an encrypted Office document (its
 * `EncryptedPackage` stream instead of a zip) and a `.doc` with macros (a `Macros` or
 * `_VBA_PROJECT` storage) are refused before LibreOffice opens them. A `.doc` encrypted in its
 * own way (RC4) fails in the converter instead.
 */
export function checkCompoundFile(bytes: Buffer): void {
  const names = directoryNames(bytes)
  if (names.some((n) => n === 'EncryptedPackage' || n === 'EncryptionInfo'))
    throw new UeError('UE_WORD_ENCRYPTED', { detail: 'an encrypted Office package' })
  if (names.some((n) => n === 'Macros' || n === '_VBA_PROJECT' || n === 'VBA'))
    throw new UeError('UE_WORD_MACROS', { detail: 'a .doc with macros' })
}

const END_OF_CHAIN = 0xfffffffe
const broken = () => new UeError('UE_WORD_INVALID', { detail: 'a damaged compound file' })

/** The names of a compound file's directory entries, read through its FAT (MS-CFB). */
function directoryNames(b: Buffer): string[] {
  if (b.length < 512) throw broken()
  const shift = b.readUInt16LE(0x1e)
  if (shift !== 9 && shift !== 12) throw broken()
  const size = 1 << shift
  const sectors = Math.floor(b.length / size)
  const at = (n: number) => {
    if (n >= sectors - 1) throw broken()
    return (n + 1) * size
  }
  // The FAT's own sectors: 109 in the header, the rest along the DIFAT chain.
  const fatSectors: number[] = []
  for (let i = 0; i < 109; i++) fatSectors.push(b.readUInt32LE(0x4c + 4 * i))
  let difat = b.readUInt32LE(0x44)
  for (let hops = 0; difat < END_OF_CHAIN; hops++) {
    if (hops > sectors) throw broken()
    const base = at(difat)
    for (let i = 0; i < size / 4 - 1; i++) fatSectors.push(b.readUInt32LE(base + 4 * i))
    difat = b.readUInt32LE(base + size - 4)
  }
  const fat: number[] = []
  for (const sector of fatSectors.slice(0, b.readUInt32LE(0x2c))) {
    if (sector >= END_OF_CHAIN) continue
    const base = at(sector)
    for (let i = 0; i < size / 4; i++) fat.push(b.readUInt32LE(base + 4 * i))
  }
  const names: string[] = []
  let dir = b.readUInt32LE(0x30)
  for (let hops = 0; dir < END_OF_CHAIN; hops++) {
    if (hops > sectors || dir >= fat.length) throw broken()
    const base = at(dir)
    for (let e = 0; e < size / 128; e++) {
      const entry = base + e * 128
      const length = Math.min(b.readUInt16LE(entry + 0x40), 64)
      if (length >= 2) names.push(b.toString('utf16le', entry, entry + length - 2))
    }
    dir = fat[dir] as number
  }
  return names
}
