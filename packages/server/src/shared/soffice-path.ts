import { accessSync, constants } from 'node:fs'
import { delimiter, isAbsolute, join } from 'node:path'

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
