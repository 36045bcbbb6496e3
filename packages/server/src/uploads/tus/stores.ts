import { unlink } from 'node:fs/promises'
import { join } from 'node:path'
import type { DataStore } from '@tus/server'
import type { ServerConfig } from '../../config/load.js'
import type { UploadRow } from '../../db/upload-ledger.js'
import { importOptional } from '../../shared/optional-deps.js'
import type { Logger, StorageKey } from '../../shared/types.js'
import type { StorageDriver } from '../../storage/driver.js'
import type { FinishedBytes, UnfinishedBytes } from '../unfinished.js'
import { writesAwaited } from './awaited-writes.js'
import { TUS_FOLDER, tusIdOfKey, UPLOAD_ID } from './keys.js'

export { UPLOAD_ID }

/** The tus data store of the configured storage, and how its uploads map to ledger rows. */
export interface TusPlace extends UnfinishedBytes {
  readonly datastore: DataStore
  /** The folder the bytes are kept in on this machine (local storage), for the log. */
  readonly folder?: string
  /** The id the store knows an upload by (the bucket key carries the storage prefix). */
  storeIdOf(id: string): string
  /** The ledger id of a store id, or null when it is not one of ours. */
  ledgerIdOf(storeId: string): string | null
  /** The bytes of a finished upload, for the ending. */
  finished(id: string): FinishedBytes
}

/** Each store's package loads only for its storage: the S3 one (an optional dependency) pulls the AWS SDK. */
export async function tusPlace(
  config: ServerConfig,
  storage: StorageDriver,
  log: Logger,
): Promise<TusPlace> {
  const expirationPeriodInMilliseconds = config.uploads.expiryMs
  const c = config.storage
  if (c.driver === 'local') {
    const { LocalTusStore } = await import('./local-store.js')
    const directory = join(c.root, TUS_FOLDER)
    const store = new LocalTusStore({ directory, expirationPeriodInMilliseconds })
    const datastore = writesAwaited(store)
    return {
      datastore,
      folder: directory,
      storeIdOf: (id) => id,
      ledgerIdOf: (storeId) => (UPLOAD_ID.test(storeId) ? storeId : null),
      finished: (id) => ({ kind: 'file', path: join(directory, id) }),
      async remove(row: UploadRow) {
        await datastore.remove(row.id).catch(() => {})
        // The store leaves its record behind when the file itself is already gone.
        await unlink(join(directory, `${row.id}.json`)).catch(() => {})
      },
      async sweepOrphans() {
        // Uploads whose row is gone (a crash between the two): the store's own expiry.
        return datastore.deleteExpired().catch((e: unknown) => {
          log.warn({ err: e }, 'expired tus uploads not removed')
          return 0
        })
      },
    }
  }
  const bucketPrefix = c.prefix ? (c.prefix.endsWith('/') ? c.prefix : `${c.prefix}/`) : ''
  const storePrefix = `${bucketPrefix}${TUS_FOLDER}/`
  const { accessKeyId, secretAccessKey } = c
  const { S3Store } = await importOptional(
    '@tus/s3-store',
    'tus.enabled with S3 storage',
    () => import('@tus/s3-store'),
  )
  const store = new S3Store({
    expirationPeriodInMilliseconds,
    // Expiry is the ledger's sweep: tags would need a lifecycle rule of the bucket's own.
    useTags: false,
    s3ClientConfig: {
      bucket: c.bucket,
      region: c.region,
      forcePathStyle: c.forcePathStyle,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...(c.endpoint ? { endpoint: c.endpoint } : {}),
      ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey } } : {}),
    },
  })
  // A HEAD, or the PATCH that resumes a broken one, waits for the parts it was still sending.
  const datastore = writesAwaited(store)
  // Keys of the storage driver are relative to the bucket prefix.
  const keysOf = (id: string) =>
    ['', '.info', '.part'].map((end) => `${TUS_FOLDER}/${id}${end}` as StorageKey)
  return {
    datastore,
    storeIdOf: (id) => `${storePrefix}${id}`,
    ledgerIdOf(storeId) {
      const id = storeId.startsWith(storePrefix) ? storeId.slice(storePrefix.length) : ''
      return UPLOAD_ID.test(id) ? id : null
    },
    finished: (id) => ({ kind: 'object', key: `${TUS_FOLDER}/${id}` as StorageKey }),
    async remove(row: UploadRow) {
      // Aborts an unfinished multipart upload; a finished one is an object and its sidecars.
      await datastore.remove(`${storePrefix}${row.id}`).catch(() => {})
      for (const key of keysOf(row.id)) await storage.delete(key)
    },
    idOfKey: tusIdOfKey,
  }
}
