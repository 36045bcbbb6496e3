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

/** Writer's library beside the `soffice` it runs: Debian packs it as libreoffice-writer-nogui. */
const WRITER_LIBRARIES = ['libswlo.so', 'libswlo.dylib', 'swlo.dll']

/** Whether the LibreOffice at `soffice` (a found executable) has Writer, which opens `.doc`. */
export function sofficeHasWriter(soffice: string): boolean {
  try {
    const program = dirname(realpathSync(soffice))
    return WRITER_LIBRARIES.some((name) => existsSync(join(program, name)))
  } catch {
    return false
  }
}

/** `unshare -n` cuts a conversion off the network; it needs root (or user namespaces). */
export const UNSHARE = ['/usr/bin/unshare', '/bin/unshare'].find((p) => existsSync(p))

/** Whether conversions run without a network (`unshare -n` as root); otherwise see docs/word.md. */
export const convertsOffline = UNSHARE !== undefined && process.getuid?.() === 0
