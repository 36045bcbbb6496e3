import { type Readable, Transform, type TransformCallback } from 'node:stream'
import type {
  GetObjectCommandOutput,
  ListObjectsV2CommandOutput,
  S3Client,
  S3ClientConfig,
} from '@aws-sdk/client-s3'
import { isUeError, UeError } from '../shared/errors.js'
import { importOptional } from '../shared/optional-deps.js'
import type { StorageKey } from '../shared/types.js'
import { checkedKey, checkRange } from './checks.js'
import type { ListedObject, PutMeta, StorageDriver, StoredObject } from './driver.js'

export interface S3StorageOptions {
  bucket: string
  region: string
  /** S3-compatible endpoint, e.g. `http://127.0.0.1:9000`; AWS when absent. */
  endpoint?: string
  /** `endpoint/bucket/key` instead of `bucket.endpoint/key` (MinIO and most S3-compatibles). */
  forcePathStyle?: boolean
  /** Static credentials; without them the SDK's default chain (env, profile, IAM role) is used. */
  credentials?: { accessKeyId: string; secretAccessKey: string }
  /** Put in front of every key, e.g. `ueditor/`; lets several apps share one bucket. */
  prefix?: string
}

type SdkModule = typeof import('@aws-sdk/client-s3')

const QUIET = { trace() {}, debug() {}, info() {}, warn() {}, error() {} }

/**
 * An endpoint that is down or stalls fails a request within seconds instead of holding the
 * upload: 5 s to connect, 30 s without a byte on an open socket, at most 3 attempts in all.
 */
const CONNECT_TIMEOUT_MS = 5_000
const SOCKET_IDLE_TIMEOUT_MS = 30_000
const MAX_ATTEMPTS = 3

/** What goes in front of every key: the configured prefix, ending in `/`; or nothing. */
export function keyPrefix(o: S3StorageOptions): string {
  return o.prefix ? (o.prefix.endsWith('/') ? o.prefix : `${o.prefix}/`) : ''
}

/** The client settings both the storage driver and the direct-upload bucket use. */
export function s3ClientConfig(o: S3StorageOptions): S3ClientConfig {
  return {
    region: o.region,
    forcePathStyle: o.forcePathStyle ?? false,
    // S3-compatibles often reject the newer default integrity checksums, and checksums in a
    // signed URL would bind it to bytes the server has never seen.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // Failures reach the caller as UeErrors; the SDK's console warnings would only duplicate them.
    logger: QUIET,
    maxAttempts: MAX_ATTEMPTS,
    requestHandler: {
      connectionTimeout: CONNECT_TIMEOUT_MS,
      requestTimeout: SOCKET_IDLE_TIMEOUT_MS,
    },
    ...(o.endpoint ? { endpoint: o.endpoint } : {}),
    ...(o.credentials ? { credentials: { ...o.credentials } } : {}),
  }
}

/**
 * Stores objects in an S3 bucket. `put` uses a conditional write (`If-None-Match: *`), so the
 * store must support it (AWS S3, MinIO, Cloudflare R2 and others do); a store that ignores the
 * header would let a second writer replace an object.
 */
export function s3Storage(o: S3StorageOptions): StorageDriver {
  const prefix = keyPrefix(o)
  let connection: Promise<{ sdk: SdkModule; client: S3Client }> | undefined
  let closed = false

  // The SDK is large; it is loaded only by deployments that use this driver.
  function connect(): Promise<{ sdk: SdkModule; client: S3Client }> {
    if (closed) return Promise.reject(new UeError('UE_STORAGE_FAILED', { detail: 'closed' }))
    connection ??= importOptional(
      '@aws-sdk/client-s3',
      'storage.driver "s3"',
      () => import('@aws-sdk/client-s3'),
    ).then((sdk) => ({
      sdk,
      client: new sdk.S3Client(s3ClientConfig(o)),
    }))
    return connection
  }

  function objectKey(key: StorageKey): string {
    return prefix + checkedKey(key)
  }

  return {
    kind: 's3',

    async put(key: StorageKey, body: Readable, meta: PutMeta): Promise<void> {
      let Key: string
      let conn: Awaited<ReturnType<typeof connect>>
      try {
        Key = objectKey(key)
        conn = await connect()
      } catch (e) {
        body.destroy()
        throw isUeError(e) ? e : new UeError('UE_STORAGE_FAILED', { cause: e })
      }
      // A body that fails or is shorter/longer than announced aborts the request, so the store
      // never completes the object (an S3 PUT is all or nothing).
      const abort = new AbortController()
      let bodyError: unknown
      const checked = body.pipe(exactLength(meta.size))
      const fail = (e: unknown) => {
        bodyError ??= e
        checked.destroy()
        abort.abort(e)
      }
      body.once('error', fail)
      checked.once('error', fail)
      try {
        await conn.client.send(
          new conn.sdk.PutObjectCommand({
            Bucket: o.bucket,
            Key,
            Body: checked,
            ContentLength: meta.size,
            ContentType: meta.contentType,
            IfNoneMatch: '*',
            ...(meta.cacheControl ? { CacheControl: meta.cacheControl } : {}),
          }),
          { abortSignal: abort.signal },
        )
      } catch (cause) {
        if (bodyError !== undefined)
          throw isUeError(bodyError) ? bodyError : new UeError('UE_STORAGE_FAILED', { cause })
        const status = httpStatus(cause)
        if (status === 412 || status === 409)
          throw new UeError('UE_STORAGE_FAILED', { detail: 'exists', cause })
        throw new UeError('UE_STORAGE_FAILED', { cause })
      } finally {
        body.off('error', fail)
        body.destroy()
      }
    },

    async copy(from: StorageKey, to: StorageKey, meta: PutMeta): Promise<void> {
      const source = objectKey(from)
      const Key = objectKey(to)
      const { sdk, client } = await connect()
      try {
        await client.send(
          new sdk.CopyObjectCommand({
            Bucket: o.bucket,
            Key,
            // The source is `bucket/key`, each key segment URL-encoded.
            CopySource: `${o.bucket}/${source.split('/').map(encodeURIComponent).join('/')}`,
            ContentType: meta.contentType,
            MetadataDirective: 'REPLACE',
            IfNoneMatch: '*',
            ...(meta.cacheControl ? { CacheControl: meta.cacheControl } : {}),
          }),
        )
      } catch (cause) {
        const status = httpStatus(cause)
        if (status === 412 || status === 409)
          throw new UeError('UE_STORAGE_FAILED', { detail: 'exists', cause })
        throw notFoundOr(cause)
      }
    },

    async get(key: StorageKey, range?: { start: number; end: number }): Promise<StoredObject> {
      const Key = objectKey(key)
      checkRange(range)
      const { sdk, client } = await connect()
      let out: GetObjectCommandOutput
      try {
        out = await client.send(
          new sdk.GetObjectCommand({
            Bucket: o.bucket,
            Key,
            ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
          }),
        )
      } catch (cause) {
        throw notFoundOr(cause)
      }
      const body = out.Body as Readable | undefined
      if (!body) throw new UeError('UE_STORAGE_FAILED', { detail: 'no body' })
      const served = parseContentRange(out.ContentRange)
      const size = served?.size ?? out.ContentLength
      if (size === undefined) {
        body.destroy()
        throw new UeError('UE_STORAGE_FAILED', { detail: 'no size' })
      }
      if (!range) return { body, size }
      const from = served?.start ?? 0
      const to = served?.end ?? size - 1
      const end = Math.min(range.end, size - 1)
      if (from > range.start || to < end) {
        body.destroy()
        throw new UeError('UE_STORAGE_FAILED', { detail: 'range not served' })
      }
      // Some S3-compatibles answer a wider range (or the whole object) than asked for.
      if (from === range.start && to === end) return { body, size }
      return { body: body.pipe(slice(range.start - from, end - range.start + 1)), size }
    },

    async stat(key: StorageKey): Promise<{ size: number } | null> {
      const Key = objectKey(key)
      const { sdk, client } = await connect()
      try {
        const out = await client.send(new sdk.HeadObjectCommand({ Bucket: o.bucket, Key }))
        return { size: out.ContentLength ?? 0 }
      } catch (cause) {
        if (isMissing(cause)) return null
        throw new UeError('UE_STORAGE_FAILED', { cause })
      }
    },

    async delete(key: StorageKey): Promise<void> {
      const Key = objectKey(key)
      const { sdk, client } = await connect()
      try {
        // S3 deletes are idempotent: a missing key answers 204 too.
        await client.send(new sdk.DeleteObjectCommand({ Bucket: o.bucket, Key }))
      } catch (cause) {
        if (isMissing(cause)) return
        throw new UeError('UE_STORAGE_FAILED', { cause })
      }
    },

    async *list(): AsyncGenerator<ListedObject> {
      const { sdk, client } = await connect()
      let token: string | undefined
      do {
        let page: ListObjectsV2CommandOutput
        try {
          page = await client.send(
            new sdk.ListObjectsV2Command({
              Bucket: o.bucket,
              ...(prefix ? { Prefix: prefix } : {}),
              ...(token ? { ContinuationToken: token } : {}),
            }),
          )
        } catch (cause) {
          throw new UeError('UE_STORAGE_FAILED', { cause })
        }
        for (const item of page.Contents ?? []) {
          if (item.Key === undefined) continue
          yield {
            key: item.Key.slice(prefix.length) as StorageKey,
            size: item.Size ?? 0,
            modifiedAt: item.LastModified?.getTime() ?? 0,
          }
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined
      } while (token)
    },

    async close(): Promise<void> {
      closed = true
      const open = connection
      connection = undefined
      if (open) (await open.catch(() => undefined))?.client.destroy()
    },
  }
}

/** Passes the bytes through and fails unless exactly `size` bytes arrive. */
function exactLength(size: number): Transform {
  let seen = 0
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      seen += chunk.length
      if (seen > size) done(new UeError('UE_STORAGE_FAILED', { detail: 'body longer than size' }))
      else done(null, chunk)
    },
    flush(done: TransformCallback) {
      done(seen === size ? null : new UeError('UE_STORAGE_FAILED', { detail: 'body too short' }))
    },
  })
}

/** Passes on only the `length` bytes that follow the first `skip` bytes. */
function slice(skip: number, length: number): Transform {
  let offset = 0
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      const from = Math.max(0, skip - offset)
      const to = Math.min(chunk.length, skip + length - offset)
      offset += chunk.length
      done(null, from < to ? chunk.subarray(from, to) : undefined)
    },
  })
}

function parseContentRange(
  value: string | undefined,
): { start: number; end: number; size: number } | null {
  const m = value ? /^bytes (\d+)-(\d+)\/(\d+)$/.exec(value) : null
  return m ? { start: Number(m[1]), end: Number(m[2]), size: Number(m[3]) } : null
}

function httpStatus(e: unknown): number | undefined {
  const meta = (e as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata
  return meta?.httpStatusCode
}

function isMissing(e: unknown): boolean {
  const name = (e as { name?: string } | null)?.name
  return httpStatus(e) === 404 || name === 'NoSuchKey' || name === 'NotFound'
}

function notFoundOr(cause: unknown): UeError {
  return isMissing(cause)
    ? new UeError('UE_NOT_FOUND', { cause })
    : new UeError('UE_STORAGE_FAILED', { cause })
}
