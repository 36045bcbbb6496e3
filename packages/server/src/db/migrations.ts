import {
  type CreateTableBuilder,
  type Kysely,
  type Migration,
  type MigrationProvider,
  Migrator,
  sql,
} from 'kysely'
import { UeError } from '../shared/errors.js'
import { fileCountsUp } from './file-counts.js'
import { isPostgres } from './identity.js'
import { materialSearchUp } from './material-search-schema.js'

// Migrations see the database as it was when they were written, hence Kysely<any>.
// biome-ignore lint/suspicious/noExplicitAny: schema changes over time; see Kysely's migration docs
type AnyDb = Kysely<any>

/** The migration that creates the materials tables: the server seeds demo materials after it. */
export const MATERIALS_MIGRATION = '0002_materials'

/** Ordered by name; append a new entry to add a migration, never edit a released one. */
const MIGRATIONS: Record<string, Migration> = {
  '0001_files': {
    async up(db: AnyDb) {
      await withId(db, db.schema.createTable('files'))
        .addColumn('key', 'text', (c) => c.notNull().unique())
        .addColumn('category', 'text', (c) => c.notNull())
        .addColumn('original_name', 'text')
        .addColumn('ext', 'text')
        .addColumn('size', 'bigint')
        .addColumn('mime', 'text')
        .addColumn('sha256', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute()
      await db.schema
        .createIndex('files_category_created_at_id_idx')
        .on('files')
        .columns(['category', 'created_at', 'id'])
        .execute()
      await db.schema.createIndex('files_ext_idx').on('files').column('ext').execute()
    },
    async down(db: AnyDb) {
      await db.schema.dropTable('files').execute()
    },
  },
  [MATERIALS_MIGRATION]: {
    async up(db: AnyDb) {
      await withId(db, db.schema.createTable('categories'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('parent_id', 'integer', (c) => c.references('categories.id'))
        .addColumn('sort_order', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute()
      await db.schema
        .createIndex('categories_parent_id_idx')
        .on('categories')
        .column('parent_id')
        .execute()
      await withId(db, db.schema.createTable('materials'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('category_id', 'integer', (c) => c.references('categories.id'))
        .addColumn('thumbnail', 'text')
        .addColumn('tags', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('tags_search', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('custom', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute()
      await db.schema
        .createIndex('materials_category_id_idx')
        .on('materials')
        .column('category_id')
        .execute()
      await db.schema
        .createIndex('materials_created_at_id_idx')
        .on('materials')
        .columns(['created_at', 'id'])
        .execute()
    },
    async down(db: AnyDb) {
      await db.schema.dropTable('materials').execute()
      await db.schema.dropTable('categories').execute()
    },
  },
  // Rows from before owners existed keep a null owner: only admins see them.
  '0003_file_owner': {
    async up(db: AnyDb) {
      await db.schema.alterTable('files').addColumn('owner', 'text').execute()
      await db.schema
        .createIndex('files_owner_category_created_at_id_idx')
        .on('files')
        .columns(['owner', 'category', 'created_at', 'id'])
        .execute()
    },
    async down(db: AnyDb) {
      await db.schema.dropIndex('files_owner_category_created_at_id_idx').execute()
      await db.schema.alterTable('files').dropColumn('owner').execute()
    },
  },
  // Reconcile walks the keys in byte order; PostgreSQL's locale order needs an index of its own.
  '0004_files_key_bytes': {
    async up(db: AnyDb) {
      if (isPostgres(db))
        await sql`create index files_key_bytes_idx on files (key collate "C")`.execute(db)
    },
    async down(db: AnyDb) {
      if (isPostgres(db)) await db.schema.dropIndex('files_key_bytes_idx').execute()
    },
  },
  // Listings cost O(page): maintained counts and covering indexes for the offset-to-row lookup.
  '0005_file_counts': { up: fileCountsUp },
  // Keyword search through text indexes: terms of 1-2 characters, trigrams for longer ones.
  '0006_material_search': { up: materialSearchUp },
  // The AI budget's daily counts, shared by every node on the database.
  '0007_ai_usage': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('ai_usage')
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('tokens', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('ai_usage_pk', ['subject', 'day'])
        .execute()
      await db.schema.createIndex('ai_usage_day_idx').on('ai_usage').column('day').execute()
    },
    async down(db: AnyDb) {
      await db.schema.dropTable('ai_usage').execute()
    },
  },
  // Resumable and direct uploads, from creation until settled: shared by every node.
  '0008_uploads': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('uploads')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('via', 'text', (c) => c.notNull())
        .addColumn('owner', 'text')
        .addColumn('client', 'text')
        .addColumn('category', 'text', (c) => c.notNull())
        .addColumn('original_name', 'text', (c) => c.notNull())
        .addColumn('size', 'bigint', (c) => c.notNull())
        .addColumn('store_ref', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('result', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute()
      await db.schema
        .createIndex('uploads_owner_state_idx')
        .on('uploads')
        .columns(['owner', 'state'])
        .execute()
      await db.schema
        .createIndex('uploads_state_expires_at_idx')
        .on('uploads')
        .columns(['state', 'expires_at'])
        .execute()
    },
    async down(db: AnyDb) {
      await db.schema.dropTable('uploads').execute()
    },
  },
}

const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
}

/** An auto-incrementing integer primary key named `id`, spelled the way each dialect wants it. */
function withId<T extends string>(
  db: AnyDb,
  table: CreateTableBuilder<T, never>,
): CreateTableBuilder<T, 'id'> {
  return table.addColumn('id', 'integer', (c) =>
    isPostgres(db) ? c.primaryKey().generatedByDefaultAsIdentity() : c.primaryKey().autoIncrement(),
  )
}

/**
 * Brings the schema to the latest migration and returns the names of the migrations it ran;
 * throws UE_INDEX_FAILED naming the one that failed.
 */
export async function migrateToLatest(db: AnyDb): Promise<string[]> {
  const { error, results } = await new Migrator({
    db,
    provider: migrationProvider,
  }).migrateToLatest()
  if (error === undefined)
    return results?.filter((r) => r.status === 'Success').map((r) => r.migrationName) ?? []
  const failed = results?.filter((r) => r.status === 'Error').map((r) => r.migrationName) ?? []
  throw new UeError('UE_INDEX_FAILED', {
    detail: `migration failed: ${failed.length > 0 ? failed.join(', ') : 'before running any'}`,
    cause: error,
  })
}
