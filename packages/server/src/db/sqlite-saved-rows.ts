import { CompiledQuery, type Kysely, sql } from '#kysely'

// biome-ignore lint/suspicious/noExplicitAny: rows of any of the schema's tables
type AnyDb = Kysely<any>

/** One table's rows as a generator saved them: column names, then each row's values. */
export interface SavedTable {
  table: string
  columns: string[]
  rows: unknown[][]
}

/** Rows saved with the code, and the digest of what they were made from. */
export interface SavedRows {
  digest: string
  tables: SavedTable[]
}

/** Columns that hold the time a row was written: a restore writes its own time there. */
const WRITE_TIMES = new Set(['created_at', 'updated_at'])

/** `tables` with 0 in every write time, which a restore replaces with its own. */
export function withoutWriteTimes(tables: readonly SavedTable[]): SavedTable[] {
  return tables.map(({ table, columns, rows }) => {
    const times = columns.map((c) => WRITE_TIMES.has(c))
    return { table, columns, rows: rows.map((row) => row.map((v, i) => (times[i] ? 0 : v))) }
  })
}

/** Rows per insert statement: well under SQLite's limit on parameters. */
const BATCH = 100

/**
 * Writes `saved` into tables that hold no row yet, in one transaction, with `now` in each
 * row's write times; false (nothing written) when any of them holds a row.
 */
export async function restoreRows(db: AnyDb, saved: SavedRows, now: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    for (const { table } of saved.tables) {
      const { rows } = await sql<{
        one: number
      }>`select 1 as one from ${sql.table(table)} limit 1`.execute(trx)
      if (rows.length > 0) return false
    }
    // Compiled here: Kysely building a query of a few thousand values took ten times as long.
    for (const { table, columns, rows } of saved.tables) {
      const times = columns.map((c) => WRITE_TIMES.has(c))
      const head = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values `
      const tuple = `(${columns.map(() => '?').join(', ')})`
      for (let start = 0; start < rows.length; start += BATCH) {
        const batch = rows.slice(start, start + BATCH)
        const parameters = batch.flatMap((row) => row.map((v, i) => (times[i] ? now : v)))
        await trx.executeQuery(
          CompiledQuery.raw(head + batch.map(() => tuple).join(', '), parameters),
        )
      }
    }
    return true
  })
}

/** A table's rows, every column, in the order of its primary key. */
export async function tableRows(kysely: AnyDb, table: string): Promise<SavedTable> {
  // Column names as SQLite has them, not as the camel-case plugin hands rows back.
  const db = kysely.withoutPlugins()
  const info = await sql<{
    name: string
    pk: number
  }>`select name, pk from pragma_table_info(${table})`.execute(db)
  const columns = info.rows.map((c) => c.name)
  const key = info.rows
    .filter((c) => c.pk > 0)
    .sort((a, b) => a.pk - b.pk)
    .map((c) => sql.id(c.name))
  const { rows } = await sql<
    Record<string, unknown>
  >`select * from ${sql.table(table)} order by ${sql.join(key)}`.execute(db)
  return { table, columns, rows: rows.map((r) => columns.map((c) => r[c])) }
}

/**
 * The rows of every table that holds any, in the order SQLite keeps the tables: its own tables,
 * the migrator's, and those a virtual table makes for itself (its triggers fill them) left out.
 */
export async function rowsOfEveryTable(kysely: AnyDb): Promise<SavedTable[]> {
  const { rows: tables } = await sql<{ name: string; type: string }>`pragma table_list`.execute(
    kysely.withoutPlugins(),
  )
  const { rows: order } = await sql<{ name: string }>`
    select name from sqlite_schema where type = 'table' order by rowid`.execute(
    kysely.withoutPlugins(),
  )
  const ordinary = new Set(tables.filter((t) => t.type === 'table').map((t) => t.name))
  const saved: SavedTable[] = []
  for (const { name } of order) {
    if (!ordinary.has(name) || name.startsWith('sqlite_') || name.startsWith('kysely_')) continue
    const table = await tableRows(kysely, name)
    if (table.rows.length > 0) saved.push(table)
  }
  return saved
}
