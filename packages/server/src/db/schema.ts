import type { Generated, Insertable, Selectable } from 'kysely'
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
}

export interface DbSchema {
  files: FilesTable
}

export type FileRow = Selectable<FilesTable>
export type NewFileRow = Insertable<FilesTable>
