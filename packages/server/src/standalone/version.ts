import { readFileSync } from 'node:fs'

/** This package's version, read from its package.json (dist/src/standalone → package root). */
export function packageVersion(): string {
  const file = new URL('../../../package.json', import.meta.url)
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version
}
