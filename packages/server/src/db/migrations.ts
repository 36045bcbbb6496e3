import {
  type CreateTableBuilder,
  DEFAULT_MIGRATION_TABLE,
  type Kysely,
  type Migration,
  type MigrationProvider,
  Migrator,
  sql,
} from '#kysely'
import { UeError } from '../shared/errors.js'
import { fileCountsUp } from './file-counts.js'
import { fileDayCountsUp } from './file-day-counts.js'
import { isPostgres } from './identity.js'
import { materialSearchUp } from './material-search-schema.js'
import { createFromSavedSchema } from './sqlite-saved-schema.js'

// Migrations see the database as it was when they were written, hence Kysely<any>.
// biome-ignore lint/suspicious/noExplicitAny: schema changes over time; see Kysely's migration docs
type AnyDb = Kysely<any>

/** The migration that creates the materials tables: the server seeds demo materials after it. */
export const MATERIALS_MIGRATION = '0002_materials'

/** The table the per-client limits count in on PostgreSQL. */
export const LIMITS_MIGRATION = '0012_rate_limits'
export const LIMITS_TABLE = 'rate_limits'

/** The webhook outbox's table. */
export const OUTBOX_MIGRATION = '0009_event_outbox'

/**
 * Ordered by name; append a new entry to add a migration, never edit a released one, then save
 * the schema a new SQLite index is created from: `npm run save-sqlite-schema`.
 */
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
  // The host app's documents, the stored files each references, and when tracking started.
  '0008_documents': {
    async up(db: AnyDb) {
      await db.schema
        .createTable('documents')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('owner', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('saved_at', 'bigint', (c) => c.notNull())
        .execute()
      await db.schema
        .createTable('document_files')
        .addColumn('document_id', 'text', (c) =>
          c.notNull().references('documents.id').onDelete('cascade'),
        )
        // A file deleted on its own (the editor's delete action) leaves its documents with it.
        .addColumn('file_id', 'integer', (c) =>
          c.notNull().references('files.id').onDelete('cascade'),
        )
        .addPrimaryKeyConstraint('document_files_pk', ['document_id', 'file_id'])
        .execute()
      // Orphans and the delete of a file ask "is this file referenced?" by file.
      await db.schema
        .createIndex('document_files_file_id_idx')
        .on('document_files')
        .column('file_id')
        .execute()
      await db.schema
        .createTable('document_tracking')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('started_at', 'bigint', (c) => c.notNull())
        .addColumn('last_file_before', 'bigint', (c) => c.notNull())
        .execute()
    },
    async down(db: AnyDb) {
      await db.schema.dropTable('document_tracking').execute()
      await db.schema.dropTable('document_files').execute()
      await db.schema.dropTable('documents').execute()
    },
  },
  // Events for the webhook, written in the transaction of their change (docs/events.md).
  [OUTBOX_MIGRATION]: {
    async up(db: AnyDb) {
      await withId(db, db.schema.createTable('event_outbox'))
        .addColumn('event_id', 'text', (c) => c.notNull().unique())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('due_at', 'bigint', (c) => c.notNull())
        .addColumn('lease_until', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('lease_owner', 'text')
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('last_error', 'text')
        .execute()
      // The claim's "no earlier event of the same subject is waiting" looks rows up by these.
      await db.schema
        .createIndex('event_outbox_subject_id_idx')
        .on('event_outbox')
        .columns(['subject', 'id'])
        .execute()
      await db.schema
        .createIndex('event_outbox_due_at_idx')
        .on('event_outbox')
        .column('due_at')
        .execute()
    },
    async down(db: AnyDb) {
      await db.schema.dropTable('event_outbox').execute()
    },
  },
  // Resumable and direct uploads, from creation until settled: shared by every node.
  '0010_uploads': {
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
  // Deep listing offsets in O(days + one day's files): counts per day of created_at.
  '0011_file_day_counts': { up: fileDayCountsUp },
  // The per-client limits' shared counts (rate-limiter-flexible's layout: key, points, expire).
  // Created here, never by the library, and on SQLite too so that both have one schema.
  [LIMITS_MIGRATION]: {
    async up(db: AnyDb) {
      await db.schema
        .createTable(LIMITS_TABLE)
        .addColumn('key', 'varchar(255)', (c) => c.primaryKey())
        .addColumn('points', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('expire', 'bigint')
        .execute()
      await db.schema
        .createIndex('rate_limits_expire_idx')
        .on(LIMITS_TABLE)
        .column('expire')
        .execute()
    },
    async down(db: AnyDb) {
      await db.schema.dropTable(LIMITS_TABLE).execute()
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
 * Brings the schema to the latest migration and returns the names of the migrations it ran (a
 * new SQLite index gets the saved schema instead, unless `savedSchema` is false);
 * throws UE_INDEX_NEWER when the index has run migrations this release does not know (a newer
 * release migrated it), and UE_INDEX_FAILED naming the one that failed.
 */
export async function migrateToLatest(
  db: AnyDb,
  o: { savedSchema: boolean } = { savedSchema: true },
): Promise<string[]> {
  const names = Object.keys(MIGRATIONS).sort()
  if (o.savedSchema && !isPostgres(db) && (await savedSchemaCreated(db, names))) return names
  await refuseNewer(db)
  const { error, results } = await new Migrator({
    db,
    provider: migrationProvider,
  }).migrateToLatest()
  if (error === undefined)
    return results?.filter((r) => r.status === 'Success').map((r) => r.migrationName) ?? []
  const failed = results?.filter((r) => r.status === 'Error').map((r) => r.migrationName) ?? []
  // A newer release may have migrated the index between the check above and the run.
  if (failed.length === 0) await refuseNewer(db)
  throw new UeError('UE_INDEX_FAILED', {
    detail: `migration failed: ${failed.length > 0 ? failed.join(', ') : 'before running any'}`,
    cause: error,
  })
}

async function savedSchemaCreated(db: AnyDb, names: readonly string[]): Promise<boolean> {
  try {
    return await createFromSavedSchema(db, names)
  } catch (cause) {
    throw new UeError('UE_INDEX_FAILED', { detail: 'creating the index schema failed', cause })
  }
}

/** The newest migration this release has. */
export const LATEST_MIGRATION = Object.keys(MIGRATIONS).sort().at(-1) as string

/**
 * The migrations the index has run that this release does not have, by name: a newer release
 * ran them, and this one cannot know what they changed. Empty for an index never migrated.
 */
export async function unknownMigrations(db: AnyDb): Promise<string[]> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true })
  if (!tables.some((t) => t.name === DEFAULT_MIGRATION_TABLE)) return []
  const rows: { name: string }[] = await db
    .selectFrom(DEFAULT_MIGRATION_TABLE)
    .select('name')
    .execute()
  return rows
    .map((r) => r.name)
    .filter((name) => !Object.hasOwn(MIGRATIONS, name))
    .sort()
}

/** The refusal to use an index a newer release has migrated, naming what it ran. */
export function newerIndex(unknown: readonly string[]): UeError {
  return new UeError('UE_INDEX_NEWER', {
    detail:
      `the index was migrated by a newer release of ueditor-server: it has run ` +
      `${unknown.length === 1 ? 'migration' : 'migrations'} ${unknown.join(', ')}, which this ` +
      `release (up to ${LATEST_MIGRATION}) does not have. Upgrade ueditor-server to the release ` +
      'that ran it (or a later one); to go back to this release, restore an index backup taken ' +
      'before the upgrade',
  })
}

async function refuseNewer(db: AnyDb): Promise<void> {
  const unknown = await unknownMigrations(db)
  if (unknown.length > 0) throw newerIndex(unknown)
}
