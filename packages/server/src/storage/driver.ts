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

/**
 * Bytes at rest. No URLs and no listing: listings come from the metadata index.
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
  /** Reads the object, optionally a byte range (inclusive `start`, inclusive `end`). */
  get(key: StorageKey, range?: { start: number; end: number }): Promise<StoredObject>
  /** Size in bytes, or null when the object does not exist. */
  stat(key: StorageKey): Promise<{ size: number } | null>
  /** Idempotent. */
  delete(key: StorageKey): Promise<void>
  close?(): Promise<void>
}
