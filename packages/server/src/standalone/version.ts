import { readFileSync } from 'node:fs'
import { packageFile } from '../shared/package-files.js'

/** This package's version, read from its package.json. */
export function packageVersion(): string {
  const file = packageFile('package.json')
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version
}
