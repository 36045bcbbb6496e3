import type { Generated, Selectable } from '#kysely'
import type { Category, StorageKey } from '../shared/types.js'

/**
 * Table types as TypeScript sees them: camelCase here, snake_case in SQL through Kysely's
 * `CamelCasePlugin`. Nullable columns mirror the DDL in `migrations.ts`.
 */
export interface FilesTable {
  id: Generated<number>
  key: StorageKey
  category: Category
  originalName: string | null
  ext: string | null
  /** bigint: files may exceed 2 GiB. */
  size: number | null
  mime: string | null
  sha256: string | null
  /** Milliseconds since the epoch (bigint). */
  createdAt: number
  /** The user who stored it; null for files stored without auth (or before owners existed). */
  owner: string | null
}

/** Material categories: a tree through `parentId` (null at the top). */
export interface CategoriesTable {
  id: Generated<number>
  name: string
  parentId: number | null
  /** `sort_order` in SQL: `order` is a reserved word. */
  sortOrder: number
  /** Milliseconds since the epoch (bigint). */
  createdAt: number
  updatedAt: number
}

/** Designer materials: an HTML fragment with its category, tags and custom fields. */
export interface MaterialsTable {
  id: Generated<number>
  name: string
  /** Sanitised HTML. */
  content: string
  categoryId: number | null
  thumbnail: string | null
  /** JSON array of strings. */
  tags: string
  /** The tags joined by newlines, for a literal substring search that JSON syntax cannot match. */
  tagsSearch: string
  /** JSON object of the integrator's own fields. */
  custom: string
  createdAt: number
  updatedAt: number
}

/** Maintained by triggers (see file-counts.ts): files per scope, category and extension. */
export interface FileCountsTable {
  scope: string
  category: string
  ext: string
  n: number
  changes: number
}

/** Kept by material-terms.ts: the 1-2 character substrings of each material's name and tags. */
export interface MaterialTermsTable {
  term: string
  id: number
  /** The material's category id, 0 for none. */
  categoryKey: number
  createdAt: number
}

export interface MaterialTermCountsTable {
  term: string
  categoryKey: number
  n: number
}

/** Tokens one AI caller (`user:<id>`, or `anonymous:<address>`) used on one UTC day. */
export interface AiUsageTable {
  subject: string
  /** `YYYY-MM-DD`, UTC. */
  day: string
  /** bigint: PostgreSQL answers it as a string. */
  tokens: number | string
}

/**
 * Events waiting for their webhook delivery (events/webhooks.ts): written in the transaction of
 * the change they announce, deleted once delivered or given up.
 */
export interface EventOutboxTable {
  /** Outbox order: the order events of one subject are delivered in. */
  id: Generated<number>
  eventId: string
  type: string
  /** What the event is about (a storage key, a document id): one at a time per subject. */
  subject: string
  /** The JSON body exactly as it is sent and signed. */
  body: string
  /** Milliseconds since the epoch (bigint), as are the two below. */
  createdAt: number | string
  /** The next attempt is due at this time. */
  dueAt: number | string
  /** A node delivering it holds it until then; 0: nobody does. */
  leaseUntil: number | string
  leaseOwner: string | null
  attempts: number
  lastError: string | null
}

/** A host app's article: its id is the host's own (1-200 characters). */
export interface DocumentsTable {
  id: string
  /** The user who first saved it; null when a service credential (or nobody, mode none) did. */
  owner: string | null
  /** Milliseconds since the epoch (bigint). */
  createdAt: number
  savedAt: number
}

/** Which stored files a document references, as of its last save. */
export interface DocumentFilesTable {
  documentId: string
  fileId: number
}

/**
 * One row (`id` 1) once document tracking has started: only files with a larger id (stored
 * after it) can ever become orphans.
 */
export interface DocumentTrackingTable {
  id: number
  /** Milliseconds since the epoch (bigint). */
  startedAt: number
  /** The largest file id when tracking started (0 for an empty library). */
  lastFileBefore: number
}

/** One resumable (tus) or direct-to-bucket upload, from its creation until it is settled. */
export interface UploadsTable {
  /** Server-chosen, URL-safe, 128 random bits or more. */
  id: string
  via: 'tus' | 'direct'
  owner: string | null
  /** The per-client limits key (`user:<id>` or the address's key). */
  client: string | null
  category: 'image' | 'video' | 'audio' | 'file'
  originalName: string
  /** Declared bytes (bigint), reserved against the owner's quota until settled. */
  size: number | string
  /** Where the unfinished bytes are: the tus store's id, or the pending object's key. */
  storeRef: string
  state: 'receiving' | 'processing' | 'done' | 'refused'
  /** JSON: the upload result, or `{code, message}` when refused; null until settled. */
  result: string | null
  /** Milliseconds since the epoch (bigint). */
  createdAt: number | string
  expiresAt: number | string
}

export interface DbSchema {
  fileCounts: FileCountsTable
  materialTerms: MaterialTermsTable
  materialTermCounts: MaterialTermCountsTable
  files: FilesTable
  categories: CategoriesTable
  materials: MaterialsTable
  aiUsage: AiUsageTable
  eventOutbox: EventOutboxTable
  documents: DocumentsTable
  documentFiles: DocumentFilesTable
  documentTracking: DocumentTrackingTable
  uploads: UploadsTable
}

export type FileRow = Selectable<FilesTable>
export type CategoryRow = Selectable<CategoriesTable>
export type MaterialRow = Selectable<MaterialsTable>
export type DocumentRow = Selectable<DocumentsTable>
