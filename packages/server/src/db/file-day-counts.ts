import { type Kysely, sql } from '#kysely'
import { DAY_MS } from '../shared/durations.js'
import { isPostgres } from './identity.js'
import type { WalkStart } from './listing-sql.js'

// biome-ignore lint/suspicious/noExplicitAny: runs inside a migration, on the schema of its time
type AnyDb = Kysely<any>

/**
 * The bucket of a `created_at`: its UTC day since 1970, every earlier time in bucket -1. The
 * same expression in the triggers and in the fill, on both dialects.
 */
function dayOf(column: string) {
  return sql.raw(`case when ${column} < 0 then -1 else cast(${column} / ${DAY_MS} as bigint) end`)
}

/** The `created_at` range of a bucket: from `from` (inclusive) to `until` (exclusive). */
export function dayRange(day: number): WalkStart {
  return day < 0 ? { from: undefined, until: 0 } : { from: day * DAY_MS, until: (day + 1) * DAY_MS }
}

/**
 * `file_day_counts` holds, per `file_counts` key (scope, category, extension) and day of
 * `created_at`, how many files exist. A listing finds the row at a deep offset by summing days
 * from the nearer end up to the day that holds it, then walks an index inside that day only.
 * Triggers keep it in the same transaction as each write to `files`, like `file_counts`.
 */
export async function fileDayCountsUp(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('file_day_counts')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('ext', 'text', (c) => c.notNull())
    .addColumn('day', 'bigint', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('file_day_counts_pk', ['scope', 'category', 'ext', 'day'])
    .execute()
  await sql`
    insert into file_day_counts (scope, category, ext, day, n)
    select scope, category, ext, day, count(*) from (
      select '*' as scope, category, coalesce(ext, '') as ext, ${dayOf('created_at')} as day
      from files
      union all
      select case when owner is null then '-' else 'u:' || owner end, category, coalesce(ext, ''),
             ${dayOf('created_at')}
      from files
    ) as s
    group by scope, category, ext, day
  `.execute(db)
  if (isPostgres(db)) await postgresTriggers(db)
  else await sqliteTriggers(db)
}

/** One upsert of two rows (every file, and the owner's scope) per inserted or deleted file. */
function dayCountRows(row: 'new' | 'old', delta: 1 | -1) {
  const day = dayOf(`${row}.created_at`)
  const ext = sql.raw(`coalesce(${row}.ext, '')`)
  const owner = sql.raw(`case when ${row}.owner is null then '-' else 'u:' || ${row}.owner end`)
  const category = sql.raw(`${row}.category`)
  const n = sql.raw(String(delta))
  return sql`
    insert into file_day_counts (scope, category, ext, day, n)
    values ('*', ${category}, ${ext}, ${day}, ${n}), (${owner}, ${category}, ${ext}, ${day}, ${n})
    on conflict (scope, category, ext, day) do update set n = file_day_counts.n + excluded.n
  `
}

async function sqliteTriggers(db: AnyDb): Promise<void> {
  const removed = dayCountRows('old', -1)
  const added = dayCountRows('new', 1)
  await sql`create trigger files_day_counts_insert after insert on files begin ${added}; end`.execute(
    db,
  )
  await sql`create trigger files_day_counts_delete after delete on files begin ${removed}; end`.execute(
    db,
  )
  await sql`
    create trigger files_day_counts_update after update of category, ext, owner, created_at
    on files begin ${removed}; ${added}; end
  `.execute(db)
}

async function postgresTriggers(db: AnyDb): Promise<void> {
  await sql`
    create function files_day_counts_apply() returns trigger language plpgsql as $$
    begin
      if tg_op in ('DELETE', 'UPDATE') then ${dayCountRows('old', -1)}; end if;
      if tg_op in ('INSERT', 'UPDATE') then ${dayCountRows('new', 1)}; end if;
      return null;
    end
    $$
  `.execute(db)
  await sql`
    create trigger files_day_counts after insert or delete or update of category, ext, owner,
    created_at on files for each row execute function files_day_counts_apply()
  `.execute(db)
}
