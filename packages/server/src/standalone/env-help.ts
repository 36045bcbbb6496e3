import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { packageFile } from '../shared/package-files.js'

/** One line of `--help`'s table: a variable and what it sets. */
export type EnvHelpLine = readonly [name: string, help: string]

interface Saved {
  /** The digest of the config modules the lines were read from. */
  source: string
  lines: EnvHelpLine[]
}

/*
 * The table is read from the config schema, which loads zod and builds every schema: most of
 * what `--help` would cost. The build saves it next to this module (`npm run build`), with a
 * digest of the config modules it came from; a saved table that does not match them (a build
 * by `tsc` alone, an edited default) is not used, and the table is read from the schema again.
 */
const SAVED = packageFile('dist/src/standalone/env-help.json')
const CONFIG = packageFile('dist/src/config')

/** The variables' lines of `--help`, in the order `docs/config.md` lists them. */
export async function envHelpLines(): Promise<EnvHelpLine[]> {
  try {
    const saved = JSON.parse(readFileSync(SAVED, 'utf8')) as Saved
    if (saved.source === configDigest()) return saved.lines
  } catch {
    // Not saved yet: read from the schema.
  }
  return fromSchema()
}

/** Saves the table for later `--help` runs; part of the build. */
export async function saveEnvHelp(): Promise<void> {
  const saved: Saved = { source: configDigest(), lines: await fromSchema() }
  writeFileSync(SAVED, `${JSON.stringify(saved)}\n`)
}

async function fromSchema(): Promise<EnvHelpLine[]> {
  const { ENV_VARS } = await import('../config/env-var-table.js')
  return ENV_VARS.map((v) => [v.name, v.help] as const)
}

function configDigest(): string {
  const hash = createHash('sha256')
  for (const name of readdirSync(CONFIG)
    .filter((n) => n.endsWith('.js'))
    .sort())
    hash.update(name).update(readFileSync(join(CONFIG, name)))
  return hash.digest('hex')
}
