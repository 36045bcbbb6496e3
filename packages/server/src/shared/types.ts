import type { ConnectionInfo } from './request-info.js'

/**
 * A web-standard handler. `info` carries what the `Request` cannot: the client address and the
 * host framework's request (the adapters fill it; embedders calling it directly may too).
 */
export type FetchHandler = (request: Request, info?: ConnectionInfo) => Promise<Response>

/** The kinds of stored file; each upload action writes one, listings read one or more. */
export type Category = 'image' | 'scrawl' | 'snapscreen' | 'catch' | 'video' | 'audio' | 'file'

export type Id = number | string

export interface Page<T> {
  items: readonly T[]
  total: number
}

/** A storage key made only by `ingest/keys.ts`: relative, normalised, traversal-free. */
export type StorageKey = string & { readonly __brand: 'StorageKey' }

export interface Logger {
  debug(o: object, msg?: string): void
  info(o: object, msg?: string): void
  warn(o: object, msg?: string): void
  error(o: object, msg?: string): void
}

/** The editor's answer to a stored upload; the upload ledger keeps it for settled uploads too. */
export interface UploadResult {
  state: 'SUCCESS'
  url: string
  title: string
  original: string
  type: string
  size: number
}
