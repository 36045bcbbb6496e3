import type { Readable } from 'node:stream'
import type { StorageKey } from '../shared/types.js'

export interface PutMeta {
  size: number
  contentType: string
  cacheControl?: string
}

export interface StoredObject {
  body: Readable
  size: number
}

/** One stored object as `list` reports it. */
export interface ListedObject {
  key: StorageKey
  size: number
  /** Milliseconds since the epoch. */
  modifiedAt: number
}

/**
 * Bytes at rest. No URLs; the editor's listings come from the metadata index, and `list` is
 * for checking the index against the store (`ueditor-server files reconcile`).
 * Drivers do only I/O; keys were validated by `ingest/keys.ts` before they get here.
 */
export interface StorageDriver {
  readonly kind: 'local' | 's3' | (string & {})
  /** Writes the object; fails if the key already exists. Partial writes are never visible. */
  put(key: StorageKey, body: Readable, meta: PutMeta): Promise<void>
  /**
   * Stores a finished local file (a spool file the caller still owns and removes afterwards)
   * under `key`, with the same guarantees as `put`. A driver without it gets the file through
   * `put` as a stream; the local driver links it into place instead of copying it.
   */
  putFile?(key: StorageKey, file: string, meta: PutMeta): Promise<void>
  /**
   * Copies the object at `from` to the new key `to` inside the store, with the same guarantees as
   * `put` (it fails with detail 'exists' when `to` exists): a server-side copy on S3, a hard link
   * on disk, so no byte passes through this process. `from` stays; UE_NOT_FOUND when missing.
   */
  copy(from: StorageKey, to: StorageKey, meta: PutMeta): Promise<void>
  /** Reads the object, optionally a byte range (inclusive `start`, inclusive `end`). */
  get(key: StorageKey, range?: { start: number; end: number }): Promise<StoredObject>
  /** Size in bytes, or null when the object does not exist. */
  stat(key: StorageKey): Promise<{ size: number } | null>
  /** Idempotent. */
  delete(key: StorageKey): Promise<void>
  /**
   * Every stored object, streamed in ascending order of the key's bytes (the order S3 lists
   * in), so a caller can merge it with another sorted list without holding either in memory.
   * Unfinished writes are never listed. The keys are as found in the store: not validated.
   */
  list(): AsyncIterable<ListedObject>
  close?(): Promise<void>
}

/** Ascending byte order of the UTF-8 keys: the order of `list` and of S3's own listings. */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b))
}
