import { chmod, mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
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
