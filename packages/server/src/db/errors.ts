import { isUeError, UeError } from '../shared/errors.js'

/** SQLite (better-sqlite3) and PostgreSQL (pg, SQLSTATE 23505) spell it differently. */
export function isUniqueViolation(e: unknown): boolean {
  return driverCode(e) === 'SQLITE_CONSTRAINT_UNIQUE' || driverCode(e) === '23505'
}

/** SQLite (better-sqlite3) and PostgreSQL (SQLSTATE 23503) spell it differently. */
export function isForeignKeyViolation(e: unknown): boolean {
  return driverCode(e) === 'SQLITE_CONSTRAINT_FOREIGNKEY' || driverCode(e) === '23503'
}

function driverCode(e: unknown): unknown {
  return (e as { code?: unknown } | null)?.code
}

/**
 * Runs database work; a UeError passes through, a foreign-key failure (a concurrent write
 * removed the row this one refers to) becomes UE_CONFLICT, anything else UE_INDEX_FAILED.
 */
export async function guarded<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (cause) {
    if (isUeError(cause)) throw cause
    if (isForeignKeyViolation(cause))
      throw new UeError('UE_CONFLICT', { detail: 'a concurrent change removed a category', cause })
    throw new UeError('UE_INDEX_FAILED', { cause })
  }
}
