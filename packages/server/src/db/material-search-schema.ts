import { type Kysely, sql } from '#kysely'
import { isPostgres } from './identity.js'
import { insertTerms } from './material-terms.js'

// biome-ignore lint/suspicious/noExplicitAny: runs inside a migration, on the schema of its time
type AnyDb = Kysely<any>

/**
 * Keyword search through indexes. Keywords of one or two characters go through
 * `material_terms` (every 1- and 2-character substring of the lower-cased name and tags, and ''
 * for every material) and `material_term_counts`, both kept by material-terms.ts; longer ones
 * through trigrams: FTS5 on SQLite, pg_trgm on PostgreSQL (where the extension can be created;
 * without it those searches scan, as before).
 */
export async function materialSearchUp(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('material_terms')
    .addColumn('term', 'text', (c) => c.notNull())
    .addColumn('id', 'integer', (c) => c.notNull())
    // The material's category id, 0 for none; with created_at, copied so a page needs no join.
    .addColumn('category_key', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('material_terms_pk', ['term', 'id'])
    .execute()
  await db.schema
    .createIndex('material_terms_order_idx')
    .on('material_terms')
    .columns(['term', 'created_at', 'id', 'category_key'])
    .execute()
  await db.schema.createIndex('material_terms_id_idx').on('material_terms').column('id').execute()
  await db.schema
    .createTable('material_term_counts')
    .addColumn('term', 'text', (c) => c.notNull())
    .addColumn('category_key', 'integer', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('material_term_counts_pk', ['term', 'category_key'])
    .execute()
  await insertTerms(db)
  if (isPostgres(db)) await postgresTrigrams(db)
  else await sqliteTrigrams(db)
}

async function sqliteTrigrams(db: AnyDb): Promise<void> {
  await sql`
    create virtual table materials_fts using fts5(
      name, tags_search, content = 'materials', content_rowid = 'id', tokenize = 'trigram'
    )
  `.execute(db)
  const add = sql`insert into materials_fts (rowid, name, tags_search)
    values (new.id, new.name, new.tags_search)`
  const drop = sql`insert into materials_fts (materials_fts, rowid, name, tags_search)
    values ('delete', old.id, old.name, old.tags_search)`
  await sql`create trigger materials_fts_insert after insert on materials begin ${add}; end`.execute(
    db,
  )
  await sql`create trigger materials_fts_delete after delete on materials begin ${drop}; end`.execute(
    db,
  )
  await sql`
    create trigger materials_fts_update after update of name, tags_search on materials
    begin ${drop}; ${add}; end
  `.execute(db)
  await sql`insert into materials_fts (materials_fts) values ('rebuild')`.execute(db)
}

async function postgresTrigrams(db: AnyDb): Promise<void> {
  await sql`
    do $$ begin
      create extension if not exists pg_trgm;
    exception when others then
      raise notice 'pg_trgm is not available (%): keyword searches of 3+ characters scan', sqlerrm;
    end $$
  `.execute(db)
  await sql`
    do $$ begin
      if exists (select 1 from pg_extension where extname = 'pg_trgm') then
        create index materials_name_trgm_idx on materials using gin (lower(name) gin_trgm_ops);
        create index materials_tags_trgm_idx on materials using gin (lower(tags_search) gin_trgm_ops);
      end if;
    end $$
  `.execute(db)
}
