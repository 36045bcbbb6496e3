import { resolveSqliteEngine } from '../../src/db/open.js'
import {
  type BuiltinSqlite,
  builtinSqliteAvailable,
  openBuiltinSqlite,
} from '../../src/db/sqlite-builtin.js'

export type Engine = 'node:sqlite' | 'better-sqlite3'

/** better-sqlite3 is optional: absent (or built for another Node) it cannot load. */
async function betterSqliteLoads(): Promise<string | null> {
  try {
    const { default: Database } = await import('better-sqlite3')
    new Database(':memory:').close()
    return null
  } catch (e) {
    return (e as Error).message
  }
}

const betterProblem = await betterSqliteLoads()

/**
 * Why an engine cannot run here, or null: node:sqlite does not exist before Node 22.13, and
 * better-sqlite3 is an optional native module that may be missing or built for another Node.
 */
export function engineUnavailable(engine: Engine): string | null {
  if (engine === 'node:sqlite')
    return builtinSqliteAvailable()
      ? null
      : `node:sqlite needs Node 22.13 or later (this is ${process.version})`
  return betterProblem && `better-sqlite3 cannot load: ${betterProblem}`
}

export const ENGINES: readonly Engine[] = ['node:sqlite', 'better-sqlite3']

/** The engine the server picks on this Node with the default config. */
export const DEFAULT_ENGINE: Engine = resolveSqliteEngine('auto')

/** Opens a database file directly, with the given engine, to look under the server. */
export async function rawSqlite(
  file: string,
  engine: Engine = DEFAULT_ENGINE,
): Promise<BuiltinSqlite> {
  if (engine === 'node:sqlite') return openBuiltinSqlite(file)
  const { default: Database } = await import('better-sqlite3')
  return new Database(file)
}
