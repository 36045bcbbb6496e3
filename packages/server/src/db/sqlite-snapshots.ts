import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type SqliteDatabase,
  SqliteDialect,
  SqliteDriver,
} from '#kysely'

/** Runs one statement of a snapshot and returns its rows (none for a statement without). */
export type RunQuery = <R>(query: CompiledQuery<R>) => R[]

/**
 * Reads from SQLite without a promise per statement: `work` runs synchronously, inside one read
 * transaction, as soon as the single connection is free (at once when it already is).
 */
export interface SyncSnapshots {
  read<T>(work: (run: RunQuery) => T): Promise<T>
}

/**
 * Kysely's SQLite dialect, with a driver that also serves synchronous snapshots. better-sqlite3
 * and node:sqlite answer synchronously; Kysely wraps every statement in several promises and a
 * connection hand-off, which cost a listing page about twice what SQLite spent on it.
 */
export class SnapshotSqliteDialect extends SqliteDialect {
  readonly snapshots: SyncSnapshots
  readonly #driver: SnapshotSqliteDriver

  constructor(database: SqliteDatabase) {
    super({ database })
    this.#driver = new SnapshotSqliteDriver(database)
    this.snapshots = this.#driver
  }

  override createDriver(): Driver {
    return this.#driver
  }
}

/**
 * Kysely's own driver, with the lock on the single connection taken out here (its own is then
 * never contended), so a snapshot can take it without waiting a turn when nobody holds it.
 * Whoever holds it, a Kysely transaction across its awaits included, is the connection's only
 * user.
 */
class SnapshotSqliteDriver extends SqliteDriver implements SyncSnapshots {
  readonly #lock = new HandOffLock()
  readonly #database: SqliteDatabase

  constructor(database: SqliteDatabase) {
    super({ database })
    this.#database = database
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    await this.#lock.acquire()
    try {
      return await super.acquireConnection()
    } catch (e) {
      this.#lock.release()
      throw e
    }
  }

  override async releaseConnection(): Promise<void> {
    try {
      await super.releaseConnection()
    } finally {
      this.#lock.release()
    }
  }

  read<T>(work: (run: RunQuery) => T): Promise<T> {
    if (!this.#lock.tryAcquire()) return this.#lock.acquire().then(() => this.#readHeld(work))
    try {
      return Promise.resolve(this.#readHeld(work))
    } catch (e) {
      return Promise.reject(e)
    }
  }

  #readHeld<T>(work: (run: RunQuery) => T): T {
    let open = false
    try {
      this.#run({ sql: 'begin', parameters: [] })
      open = true
      const value = work((query) => this.#run(query))
      this.#run({ sql: 'commit', parameters: [] })
      open = false
      return value
    } catch (e) {
      if (open) {
        try {
          this.#run({ sql: 'rollback', parameters: [] })
        } catch {
          // The statement's own error is the one to report.
        }
      }
      throw e
    } finally {
      this.#lock.release()
    }
  }

  #run<R>(query: Pick<CompiledQuery<R>, 'sql' | 'parameters'>): R[] {
    const statement = this.#database.prepare(query.sql)
    if (statement.reader) return statement.all(query.parameters) as R[]
    statement.run(query.parameters)
    return []
  }
}

/**
 * A lock handed straight to the longest waiter on release, so a snapshot arriving while others
 * wait queues behind them instead of overtaking.
 */
class HandOffLock {
  #held = false
  readonly #waiting: Array<() => void> = []

  tryAcquire(): boolean {
    if (this.#held) return false
    this.#held = true
    return true
  }

  acquire(): Promise<void> {
    if (this.tryAcquire()) return Promise.resolve()
    return new Promise((resolve) => this.#waiting.push(resolve))
  }

  release(): void {
    const next = this.#waiting.shift()
    if (next) next()
    else this.#held = false
  }
}
