import { crc32, deflateRawSync } from 'node:zlib'

/**
 * A one-entry ZIP whose entry inflates to `size` zero bytes (a compression bomb when `size` is
 * large): local header, deflated data, central directory, end record.
 */
export function zipBomb(entryName: string, size: number): Buffer {
  const name = Buffer.from(entryName)
  const plain = Buffer.alloc(size)
  const data = deflateRawSync(plain, { level: 9 })
  const crc = crc32(plain)
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
  const centralOffset = local.length + name.length + data.length
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(1, 8)
  end.writeUInt16LE(1, 10)
  end.writeUInt32LE(central.length + name.length, 12)
  end.writeUInt32LE(centralOffset, 16)
  return Buffer.concat([local, name, data, central, name, end])
}

/** An XML document with nested entities that expand exponentially ("billion laughs"). */
export function entityBomb(root = 'svg'): Buffer {
  const entities = ['<!ENTITY a0 "lol">']
  for (let i = 1; i <= 10; i++) entities.push(`<!ENTITY a${i} "${`&a${i - 1};`.repeat(10)}">`)
  return Buffer.from(
    `<?xml version="1.0"?>\n<!DOCTYPE ${root} [\n${entities.join('\n')}\n]>\n<${root} xmlns="http://www.w3.org/2000/svg">&a10;</${root}>\n`,
  )
}
