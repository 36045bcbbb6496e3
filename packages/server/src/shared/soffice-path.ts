import { accessSync, constants, existsSync, realpathSync } from 'node:fs'
import { delimiter, dirname, isAbsolute, join } from 'node:path'

/** The LibreOffice executable `soffice` names: itself when a path, else found on PATH; or null. */
export function findSoffice(soffice: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const runnable = (p: string) => {
    try {
      accessSync(p, constants.X_OK)
      return true
    } catch {
      return false
    }
  }
  if (isAbsolute(soffice) || soffice.includes('/')) return runnable(soffice) ? soffice : null
  for (const dir of (env.PATH ?? '').split(delimiter))
    if (dir && runnable(join(dir, soffice))) return join(dir, soffice)
  return null
}

/** A part's library, by platform's naming, beside `soffice` (Linux, Windows) or in Frameworks (macOS). */
const LIBS = {
  core: ['libmergedlo.so', 'mergedlo.dll', 'libmergedlo.dylib'],
  draw: ['libsdlo.so', 'sdlo.dll', 'libsdlo.dylib'],
  writer: ['libswlo.so', 'swlo.dll', 'libswlo.dylib'],
}

/**
 * Which parts the LibreOffice at `soffice` (a found executable) has: Draw converts Word
 * pictures, Writer opens `.doc` (Debian packs them as libreoffice-draw-nogui and
 * libreoffice-writer-nogui). Null for a wrapper script or an install laid out otherwise, where
 * nothing can be told.
 */
export function sofficeParts(soffice: string): { draw: boolean; writer: boolean } | null {
  let program: string
  try {
    program = dirname(realpathSync(soffice))
  } catch {
    return null
  }
  const dirs = [program, join(program, '..', 'Frameworks')]
  const has = (names: string[]) => dirs.some((d) => names.some((n) => existsSync(join(d, n))))
  if (!has(LIBS.core)) return null
  return { draw: has(LIBS.draw), writer: has(LIBS.writer) }
}

/** Whether the LibreOffice at `soffice` is known to have Writer, which opens `.doc`. */
export function sofficeHasWriter(soffice: string): boolean {
  return sofficeParts(soffice)?.writer === true
}

/** `unshare -n` cuts a conversion off the network; it needs root (or user namespaces). */
export const UNSHARE = ['/usr/bin/unshare', '/bin/unshare'].find((p) => existsSync(p))

/** Whether conversions run without a network (`unshare -n` as root); otherwise see docs/word.md. */
export const convertsOffline = UNSHARE !== undefined && process.getuid?.() === 0
