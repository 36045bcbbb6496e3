import { type Kysely, sql } from '#kysely'
import { isPostgres } from './identity.js'

// biome-ignore lint/suspicious/noExplicitAny: runs inside a migration, on the schema of its time
type AnyDb = Kysely<any>

/**
 * `file_counts` holds, per scope, category and extension, how many files exist (`n`) and how
 * many inserts and deletes have touched them (`changes`, only ever growing). Scopes: `*` every
 * file, `-` files without an owner, `u:<owner>` one owner's files. Triggers keep it in the same
 * transaction as the write to `files`, so every writer (any node, any version) keeps it exact.
 * A missing extension is counted under ''.
 */
export async function fileCountsUp(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('file_counts')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('ext', 'text', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addColumn('changes', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('file_counts_pk', ['scope', 'category', 'ext'])
    .execute()
  await sql`
    insert into file_counts (scope, category, ext, n, changes)
    select scope, category, ext, count(*), count(*) from (
      select '*' as scope, category, coalesce(ext, '') as ext from files
      union all
      select case when owner is null then '-' else 'u:' || owner end, category, coalesce(ext, '')
      from files
    ) as s
    group by scope, category, ext
  `.execute(db)
  if (isPostgres(db)) await postgresTriggers(db)
  else await sqliteTriggers(db)
  // The row at an offset is found by walking one of these without touching the table. The
  // category one replaces the plain (category, created_at, id) index; the extension index served
  // only the old count.
  await db.schema
    .createIndex('files_category_created_at_id_cover_idx')
    .on('files')
    .columns(['category', 'created_at', 'id', 'ext', 'owner'])
    .execute()
  await db.schema.dropIndex('files_category_created_at_id_idx').execute()
  await db.schema.dropIndex('files_ext_idx').execute()
  await db.schema
    .createIndex('files_created_at_id_cover_idx')
    .on('files')
    .columns(['created_at', 'id', 'category', 'ext', 'owner'])
    .execute()
  await db.schema
    .createIndex('files_owner_created_at_id_cover_idx')
    .on('files')
    .columns(['owner', 'created_at', 'id', 'category', 'ext'])
    .execute()
}

function countRows(row: 'new' | 'old', delta: 1 | -1) {
  const scope = sql.raw(
    `case when ${row}.owner is null then '-' else 'u:' || ${row}.owner end, ${row}.category, coalesce(${row}.ext, ''), ${delta}, 1`,
  )
  const all = sql.raw(`'*', ${row}.category, coalesce(${row}.ext, ''), ${delta}, 1`)
  return sql`
    insert into file_counts (scope, category, ext, n, changes)
    values (${all}), (${scope})
    on conflict (scope, category, ext)
    do update set n = file_counts.n + excluded.n, changes = file_counts.changes + 1
  `
}

async function sqliteTriggers(db: AnyDb): Promise<void> {
  const removed = countRows('old', -1)
  const added = countRows('new', 1)
  await sql`create trigger files_counts_insert after insert on files begin ${added}; end`.execute(
    db,
  )
  await sql`create trigger files_counts_delete after delete on files begin ${removed}; end`.execute(
    db,
  )
  await sql`
    create trigger files_counts_update after update of category, ext, owner on files
    begin ${removed}; ${added}; end
  `.execute(db)
}

async function postgresTriggers(db: AnyDb): Promise<void> {
  await sql`
    create function files_counts_apply() returns trigger language plpgsql as $$
    begin
      if tg_op in ('DELETE', 'UPDATE') then ${countRows('old', -1)}; end if;
      if tg_op in ('INSERT', 'UPDATE') then ${countRows('new', 1)}; end if;
      return null;
    end
    $$
  `.execute(db)
  await sql`
    create trigger files_counts after insert or delete or update of category, ext, owner
    on files for each row execute function files_counts_apply()
  `.execute(db)
}
