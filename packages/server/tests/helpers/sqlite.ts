import { resolveSqliteEngine } from '../../src/db/open.js'
import {
  type BuiltinSqlite,
  builtinSqliteAvailable,
  openBuiltinSqlite,
} from '../../src/db/sqlite-builtin.js'

export type Engine = 'node:sqlite' | 'better-sqlite3'

/**
 * better-sqlite3 12 aborts the process at exit on Node 24 and later (its destructors run after
 * Node's environment is gone; fixed upstream only in 13, which drops Node 20). The server uses
 * node:sqlite there, so that lane does not apply; it is never even loaded.
 */
const BETTER_SQLITE3_UNSUPPORTED =
  Number(process.versions.node.split('.')[0]) >= 24
    ? `better-sqlite3 12 aborts at process exit on Node 24 and later (this is ${process.version}); node:sqlite is the engine there`
    : null

/** better-sqlite3 is optional: absent (or built for another Node) it cannot load. */
let betterProblem: Promise<string | null> | undefined
function betterSqliteProblem(): Promise<string | null> {
  betterProblem ??= (async () => {
    try {
      const { default: Database } = await import('better-sqlite3')
      new Database(':memory:').close()
      return null
    } catch (e) {
      return `better-sqlite3 cannot load: ${(e as Error).message}`
    }
  })()
  return betterProblem
}

/**
 * Why an engine's lane does not apply on this Node (a skip, even in CI), or null: node:sqlite
 * does not exist before Node 22.13, better-sqlite3 12 is unusable from Node 24.
 */
export function engineNotApplicable(engine: Engine): string | null {
  if (engine === 'node:sqlite')
    return builtinSqliteAvailable()
      ? null
      : `node:sqlite needs Node 22.13 or later (this is ${process.version})`
  return BETTER_SQLITE3_UNSUPPORTED
}

/** Why an applicable engine cannot run here (a missing or stale better-sqlite3 build), or null. */
export async function engineMissing(engine: Engine): Promise<string | null> {
  return engine === 'better-sqlite3' ? betterSqliteProblem() : null
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
