import { crc32, deflateRawSync } from 'node:zlib'

/**
 * A one-entry ZIP whose entry inflates to `size` zero bytes (a compression bomb when `size` is
 * large).
 */
export function zipBomb(entryName: string, size: number): Buffer {
  return zipOf([{ name: entryName, data: Buffer.alloc(size) }])
}

/** An XML document with nested entities that expand exponentially ("billion laughs"). */
export function entityBomb(root = 'svg'): Buffer {
  const entities = ['<!ENTITY a0 "lol">']
  for (let i = 1; i <= 10; i++) entities.push(`<!ENTITY a${i} "${`&a${i - 1};`.repeat(10)}">`)
  return Buffer.from(
    `<?xml version="1.0"?>\n<!DOCTYPE ${root} [\n${entities.join('\n')}\n]>\n<${root} xmlns="http://www.w3.org/2000/svg">&a10;</${root}>\n`,
  )
}

/** One entry of `zipOf`; `declaredSize` is written as its unpacked size instead of the true one. */
export interface ZipEntry {
  name: string
  data: Buffer | string
  declaredSize?: number
}

/** A ZIP of deflated entries (local headers, data, central directory, end record). */
export function zipOf(entries: readonly ZipEntry[]): Buffer {
  const locals: Buffer[] = []
  const centrals: Buffer[] = []
  let offset = 0
  for (const entry of entries) {
    const name = Buffer.from(entry.name)
    const plain = typeof entry.data === 'string' ? Buffer.from(entry.data) : entry.data
    const data = deflateRawSync(plain)
    const crc = crc32(plain)
    const size = entry.declaredSize ?? plain.length
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4)
    local.writeUInt16LE(8, 8)
    local.writeUInt32LE(crc, 14)
    local.writeUInt32LE(data.length, 18)
    local.writeUInt32LE(size, 22)
    local.writeUInt16LE(name.length, 26)
    const central = Buffer.alloc(46)
    central.writeUInt32LE(0x02014b50, 0)
    central.writeUInt16LE(20, 4)
    central.writeUInt16LE(20, 6)
    central.writeUInt16LE(8, 10)
    central.writeUInt32LE(crc, 16)
    central.writeUInt32LE(data.length, 20)
    central.writeUInt32LE(size, 24)
    central.writeUInt16LE(name.length, 28)
    central.writeUInt32LE(offset, 42)
    locals.push(local, name, data)
    centrals.push(central, name)
    offset += local.length + name.length + data.length
  }
  const directory = Buffer.concat(centrals)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(entries.length, 8)
  end.writeUInt16LE(entries.length, 10)
  end.writeUInt32LE(directory.length, 12)
  end.writeUInt32LE(offset, 16)
  return Buffer.concat([...locals, directory, end])
}

/**
 * A compound file (OLE/CFB, 512-byte sectors) whose directory holds a root entry and one empty
 * stream per name: what an encrypted Office document (`EncryptionInfo`, `EncryptedPackage`) or
 * a `.doc` with macros (`Macros`) looks like to a reader of its directory.
 */
export function compoundFile(names: readonly string[]): Buffer {
  const sector = 512
  const header = Buffer.alloc(sector, 0)
  Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(header, 0)
  header.writeUInt16LE(0x3e, 0x18)
  header.writeUInt16LE(3, 0x1a)
  header.writeUInt16LE(0xfffe, 0x1c)
  header.writeUInt16LE(9, 0x1e)
  header.writeUInt16LE(6, 0x20)
  header.writeUInt32LE(1, 0x2c) // one FAT sector
  header.writeUInt32LE(1, 0x30) // the directory starts at sector 1
  header.writeUInt32LE(0x1000, 0x38)
  header.writeUInt32LE(0xfffffffe, 0x3c)
  header.writeUInt32LE(0xfffffffe, 0x44)
  for (let i = 0; i < 109; i++) header.writeUInt32LE(i === 0 ? 0 : 0xffffffff, 0x4c + 4 * i)
  const fat = Buffer.alloc(sector, 0xff)
  fat.writeUInt32LE(0xfffffffd, 0)
  fat.writeUInt32LE(0xfffffffe, 4)
  const dir = Buffer.alloc(sector, 0)
  const all = ['Root Entry', ...names].slice(0, 4)
  for (const [i, name] of all.entries()) {
    const at = i * 128
    const utf16 = Buffer.from(`${name}\0`, 'utf16le')
    utf16.copy(dir, at)
    dir.writeUInt16LE(utf16.length, at + 0x40)
    dir[at + 0x42] = i === 0 ? 5 : 2
    dir.writeUInt32LE(0xffffffff, at + 0x44)
    dir.writeUInt32LE(i + 1 < all.length && i > 0 ? i + 1 : 0xffffffff, at + 0x48)
    dir.writeUInt32LE(i === 0 && all.length > 1 ? 1 : 0xffffffff, at + 0x4c)
    dir.writeUInt32LE(0xfffffffe, at + 0x74)
  }
  return Buffer.concat([header, fat, dir])
}
