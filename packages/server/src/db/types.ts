import type { Category, Page, StorageKey } from '../shared/types.js'
import type { MaterialRepository } from './material-repo.js'

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
  start: number
  size: number
}

export interface FileIndex {
  add(entry: NewFileEntry): Promise<FileEntry>
  /** Newest first, stable: created_at desc, id desc. */
  list(q: ListQuery): Promise<Page<FileEntry>>
  get(key: StorageKey): Promise<FileEntry | null>
  remove(key: StorageKey): Promise<boolean>
  /** Bytes stored by one user, summed in the database (so it holds across nodes). */
  usage(owner: string): Promise<number>
}

export interface MetadataStore {
  readonly dialect: 'sqlite' | 'postgres'
  readonly files: FileIndex
  readonly materials: MaterialRepository
  /** Returns the names of the migrations this call ran (empty when already up to date). */
  migrate(): Promise<string[]>
  close(): Promise<void>
}
