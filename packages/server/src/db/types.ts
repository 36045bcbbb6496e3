import type { Kysely } from '#kysely'
import type { Category, Page, StorageKey } from '../shared/types.js'
import type { AiUsageStore } from './ai-usage.js'
import type { DocumentRepository } from './document-repo.js'
import type { MaterialRepository } from './material-repo.js'
import type { Outbox } from './outbox.js'
import type { DbSchema } from './schema.js'

/**
 * The transaction a change runs in, handed to work that must commit or roll back with it (the
 * same type as the document repository's).
 */
export type DbTransaction = Kysely<DbSchema>

/** Work run inside a change's transaction, after the change; if it fails, nothing commits. */
export type Within = (trx: DbTransaction) => Promise<void>

import type { UploadLedger } from './upload-ledger.js'

export interface FileEntry {
  id: number
  key: StorageKey
  category: Category
  originalName: string
  ext: string
  size: number
  mime: string
  sha256: string
  /** Milliseconds since the epoch. */
  createdAt: number
  /** The user who stored it; null when stored without auth or before owners existed. */
  owner: string | null
}

export type NewFileEntry = Omit<FileEntry, 'id' | 'createdAt' | 'owner'> & {
  createdAt?: number
  owner?: string | null
}

/** Whose files a listing shows: every row, every row with an owner, or one user's. */
export type OwnerFilter = { kind: 'all' } | { kind: 'owned' } | { kind: 'user'; user: string }

export interface ListQuery {
  categories: readonly Category[]
  /** Absent: every row. */
  owners?: OwnerFilter
  /** Lower-case dotted extensions; absent or empty means any. */
  exts?: readonly string[]
  /** Only the files this document references (by its last save). */
  document?: string
  start: number
  size: number
}

/** What reconcile needs of a row. */
export interface IndexedKey {
  key: StorageKey
  size: number
  /** Milliseconds since the epoch. */
  createdAt: number
}

/** What a listing shows of a file. */
export type ListedFile = Pick<FileEntry, 'id' | 'key' | 'originalName' | 'createdAt'>

export interface FileIndex {
  /** With `within`, the row and that work are one transaction; without, one statement. */
  add(entry: NewFileEntry, o?: { within?: Within }): Promise<FileEntry>
  /** Newest first, stable: created_at desc, id desc. */
  list(q: ListQuery): Promise<Page<ListedFile>>
  get(key: StorageKey): Promise<FileEntry | null>
  /**
   * False when no row had the key. With `within`, run with the removed row in the same
   * transaction, and only when a row went.
   */
  remove(
    key: StorageKey,
    o?: { within?: (trx: DbTransaction, removed: FileEntry) => Promise<void> },
  ): Promise<boolean>
  /** Bytes stored by one user, summed in the database (so it holds across nodes). */
  usage(owner: string): Promise<number>
  /**
   * Up to `limit` rows whose key comes after `after` (from the first when null), in ascending
   * byte order of the key: the order storage drivers list in, so the two can be merged a page
   * at a time.
   */
  keysAfter(after: StorageKey | null, limit: number): Promise<IndexedKey[]>
}

export interface MetadataStore {
  readonly dialect: 'sqlite' | 'postgres'
  readonly files: FileIndex
  readonly materials: MaterialRepository
  readonly aiUsage: AiUsageStore
  /** Events waiting for their webhook delivery. */
  readonly outbox: Outbox
  /** The host app's documents, their file references and orphans. */
  readonly documents: DocumentRepository
  /** Resumable and direct uploads until they are settled. */
  readonly uploads: UploadLedger
  /**
   * PostgreSQL: the pool the per-client limits keep their counts through (table `rate_limits`),
   * so that they hold across nodes. SQLite: null, and each node counts in its own memory.
   */
  readonly limitsClient: unknown
  /** One trivial query: resolves when the database answers, fails with UE_INDEX_FAILED if not. */
  ping(): Promise<void>
  /** Returns the names of the migrations this call ran (empty when already up to date). */
  migrate(): Promise<string[]>
  /** Migrations the index has run that this release does not have (a newer release ran them). */
  unknownMigrations(): Promise<string[]>
  /**
   * SQLite only: writes a consistent copy of the database to `file` while it stays in use
   * (`VACUUM INTO` a temporary file next to it, synced, then renamed over `file`). PostgreSQL
   * fails with UE_INDEX_FAILED: it is backed up with `pg_dump`.
   */
  backup(file: string): Promise<void>
  close(): Promise<void>
}
