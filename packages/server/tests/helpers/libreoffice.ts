import { execFile } from 'node:child_process'
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { findSoffice } from '../../src/shared/soffice-path.js'

/** The real LibreOffice on PATH, or null. */
export const SOFFICE = findSoffice('soffice')

/** What the Word tests say where LibreOffice is missing (a failure under CI=true, else a skip). */
export const INSTALL_LIBREOFFICE =
  'LibreOffice is missing: apt-get install -y libreoffice-draw-nogui libreoffice-writer-nogui'

/**
 * An install laid out as Debian's is (`program/soffice` beside the core library and the
 * parts' libraries), with only the parts asked for; its `soffice` converts nothing. For lines
 * that say which parts are there, on any machine.
 */
export async function fakeLibreOffice(
  dir: string,
  parts: { draw?: boolean; writer?: boolean } = { draw: true, writer: true },
): Promise<string> {
  const program = join(dir, 'libreoffice', 'program')
  await mkdir(program, { recursive: true })
  const soffice = join(program, 'soffice')
  await writeFile(soffice, '#!/bin/sh\nexit 1\n')
  await chmod(soffice, 0o755)
  await writeFile(join(program, 'libmergedlo.so'), '')
  if (parts.draw) await writeFile(join(program, 'libsdlo.so'), '')
  if (parts.writer) await writeFile(join(program, 'libswlo.so'), '')
  return soffice
}

/** A placeable WMF drawing one red filled rectangle over its whole 96 × 48 px (1440 × 720 twips). */
export function redWmf(right = 1440, bottom = 720, inch = 1440): Buffer {
  const words: number[] = []
  const rec = (fn: number, ...params: number[]) => {
    words.push((3 + params.length) & 0xffff, (3 + params.length) >>> 16, fn, ...params)
  }
  rec(0x020b, 0, 0) // SETWINDOWORG y, x
  rec(0x020c, bottom, right) // SETWINDOWEXT y, x
  rec(0x02fc, 0, 0x00ff, 0x0000, 0) // CREATEBRUSHINDIRECT solid, red
  rec(0x012d, 0) // SELECTOBJECT
  rec(0x041b, bottom, right, 0, 0) // RECTANGLE bottom, right, top, left
  rec(0x0000) // EOF
  const body = Buffer.alloc(words.length * 2)
  for (const [i, w] of words.entries()) body.writeUInt16LE(w & 0xffff, i * 2)
  const header = Buffer.alloc(18)
  header.writeUInt16LE(1, 0)
  header.writeUInt16LE(9, 2)
  header.writeUInt16LE(0x300, 4)
  header.writeUInt32LE((18 + body.length) / 2, 6)
  header.writeUInt16LE(1, 10)
  header.writeUInt32LE(7, 12)
  const placeable = Buffer.alloc(22)
  placeable.writeUInt32LE(0x9ac6cdd7, 0)
  placeable.writeInt16LE(right, 10)
  placeable.writeInt16LE(bottom, 12)
  placeable.writeUInt16LE(inch, 14)
  let sum = 0
  for (let i = 0; i < 10; i++) sum ^= placeable.readUInt16LE(i * 2)
  placeable.writeUInt16LE(sum, 20)
  return Buffer.concat([placeable, header, body])
}

/** An EMF LibreOffice makes from an SVG with a red rectangle, and the size its header declares. */
export async function redEmf(
  dir: string,
  soffice = SOFFICE as string,
): Promise<{ emf: Buffer; width: number; height: number }> {
  const svg = join(dir, 'drawing.svg')
  await writeFile(
    svg,
    '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100"><rect x="20" y="20" width="160" height="60" fill="#ff0000"/></svg>',
  )
  await promisify(execFile)(
    soffice,
    [
      '--headless',
      `-env:UserInstallation=file://${join(dir, 'profile')}`,
      '--convert-to',
      'emf',
      '--outdir',
      dir,
      svg,
    ],
    { timeout: 60_000 },
  )
  const emf = await readFile(join(dir, 'drawing.emf'))
  const px = (a: number, b: number) =>
    Math.ceil(((emf.readInt32LE(b) - emf.readInt32LE(a)) / 2540) * 96)
  return { emf, width: px(24, 32), height: px(28, 36) }
}

/**
 * A Word file LibreOffice Writer makes from `html` in `dir`: `ext` `docx` with filter
 * `MS Word 2007 XML`, or `doc` with `MS Word 97`. Needs Writer (libreoffice-writer-nogui).
 */
export async function officeFile(
  dir: string,
  html: string,
  ext: 'docx' | 'doc',
  soffice = SOFFICE as string,
): Promise<Buffer> {
  const filter = ext === 'docx' ? 'MS Word 2007 XML' : 'MS Word 97'
  const input = join(dir, 'source.html')
  await writeFile(input, html)
  await promisify(execFile)(
    soffice,
    [
      '--headless',
      `-env:UserInstallation=file://${join(dir, 'profile')}`,
      '--convert-to',
      `${ext}:${filter}`,
      '--outdir',
      dir,
      input,
    ],
    { timeout: 60_000 },
  )
  return readFile(join(dir, `source.${ext}`))
}
