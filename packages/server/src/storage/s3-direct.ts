import type { ListMultipartUploadsCommandOutput, S3Client } from '@aws-sdk/client-s3'
import { UeError } from '../shared/errors.js'
import { importOptional } from '../shared/optional-deps.js'
import type { StorageKey } from '../shared/types.js'
import { checkedKey } from './checks.js'
import { keyPrefix, type S3StorageOptions, s3ClientConfig } from './s3.js'

/** A signed browser POST: the form goes to `url` with `fields` first, then the file. */
export interface SignedPost {
  url: string
  fields: Record<string, string>
}

export interface UploadedPart {
  PartNumber: number
  ETag: string
  Size: number
}

/** A multipart upload the bucket still holds open. */
export interface OpenMultipart {
  key: StorageKey
  uploadId: string
  /** Milliseconds since the epoch. */
  initiatedAt: number
}

/**
 * What uploads straight from the browser need of the bucket: signatures for the browser's own
 * requests, and the multipart calls only the server makes. Keys are relative to
 * `storage.prefix`, as for the storage driver; every signature names its exact key. Every object
 * made this way carries `Content-Disposition: attachment`: until the server has checked it, a
 * bucket that serves it makes browsers download it, never display it.
 */
export interface DirectBucket {
  /** A POST policy for exactly `key`, `contentType`, the attachment disposition and at most `maxBytes`. */
  signPost(
    key: StorageKey,
    o: { contentType: string; maxBytes: number; expiresSeconds: number },
  ): Promise<SignedPost>
  createMultipart(key: StorageKey, contentType: string): Promise<string>
  signPart(
    key: StorageKey,
    uploadId: string,
    partNumber: number,
    expiresSeconds: number,
  ): Promise<string>
  /** Every part uploaded so far; UE_NOT_FOUND when the bucket knows no such upload. */
  listParts(key: StorageKey, uploadId: string): Promise<UploadedPart[]>
  complete(
    key: StorageKey,
    uploadId: string,
    parts: readonly { PartNumber: number; ETag: string }[],
  ): Promise<void>
  /** Idempotent: an upload the bucket no longer knows is already gone. */
  abort(key: StorageKey, uploadId: string): Promise<void>
  /** The open multipart uploads whose keys start with `under`. */
  openMultiparts(under: string): AsyncIterable<OpenMultipart>
  close(): Promise<void>
}

type Sdk = typeof import('@aws-sdk/client-s3')

const DISPOSITION = 'attachment'
/** The setting that asks for the signing packages (optional dependencies). */
const DIRECT = 'direct.enabled with S3 storage'

/** The bucket of the S3 storage driver, for direct uploads (same options, its own client). */
export function s3DirectBucket(o: S3StorageOptions): DirectBucket {
  const prefix = keyPrefix(o)
  let connection: Promise<{ sdk: Sdk; client: S3Client }> | undefined
  const connect = () => {
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
  const Key = (key: StorageKey) => prefix + checkedKey(key)
  const Bucket = o.bucket
  const failed = (cause: unknown) =>
    isNoSuchUpload(cause)
      ? new UeError('UE_NOT_FOUND', { cause })
      : new UeError('UE_STORAGE_FAILED', { cause })

  return {
    async signPost(key, p) {
      const { client } = await connect()
      const { createPresignedPost } = await importOptional(
        '@aws-sdk/s3-presigned-post',
        DIRECT,
        () => import('@aws-sdk/s3-presigned-post'),
      )
      try {
        const { url, fields } = await createPresignedPost(client, {
          Bucket,
          Key: Key(key),
          Conditions: [
            ['content-length-range', 1, p.maxBytes],
            ['eq', '$Content-Type', p.contentType],
            ['eq', '$Content-Disposition', DISPOSITION],
          ],
          Fields: { 'Content-Type': p.contentType, 'Content-Disposition': DISPOSITION },
          Expires: p.expiresSeconds,
        })
        return { url, fields }
      } catch (cause) {
        throw failed(cause)
      }
    },

    async createMultipart(key, contentType) {
      const { sdk, client } = await connect()
      try {
        const out = await client.send(
          new sdk.CreateMultipartUploadCommand({
            Bucket,
            Key: Key(key),
            ContentType: contentType,
            ContentDisposition: DISPOSITION,
          }),
        )
        if (!out.UploadId) throw new UeError('UE_STORAGE_FAILED', { detail: 'no upload id' })
        return out.UploadId
      } catch (cause) {
        throw cause instanceof UeError ? cause : failed(cause)
      }
    },

    async signPart(key, uploadId, partNumber, expiresSeconds) {
      const { sdk, client } = await connect()
      const { getSignedUrl } = await importOptional(
        '@aws-sdk/s3-request-presigner',
        DIRECT,
        () => import('@aws-sdk/s3-request-presigner'),
      )
      const command = new sdk.UploadPartCommand({
        Bucket,
        Key: Key(key),
        UploadId: uploadId,
        PartNumber: partNumber,
      })
      try {
        return await getSignedUrl(client, command, { expiresIn: expiresSeconds })
      } catch (cause) {
        throw failed(cause)
      }
    },

    async listParts(key, uploadId) {
      const { sdk, client } = await connect()
      const parts: UploadedPart[] = []
      let marker: string | undefined
      try {
        do {
          const page = await client.send(
            new sdk.ListPartsCommand({
              Bucket,
              Key: Key(key),
              UploadId: uploadId,
              ...(marker ? { PartNumberMarker: marker } : {}),
            }),
          )
          for (const p of page.Parts ?? [])
            if (p.PartNumber !== undefined && p.ETag !== undefined)
              parts.push({ PartNumber: p.PartNumber, ETag: p.ETag, Size: p.Size ?? 0 })
          marker = page.IsTruncated ? page.NextPartNumberMarker : undefined
        } while (marker)
      } catch (cause) {
        throw failed(cause)
      }
      return parts
    },

    async complete(key, uploadId, parts) {
      const { sdk, client } = await connect()
      try {
        await client.send(
          new sdk.CompleteMultipartUploadCommand({
            Bucket,
            Key: Key(key),
            UploadId: uploadId,
            MultipartUpload: { Parts: parts.map((p) => ({ ...p })) },
          }),
        )
      } catch (cause) {
        throw failed(cause)
      }
    },

    async abort(key, uploadId) {
      const { sdk, client } = await connect()
      try {
        await client.send(
          new sdk.AbortMultipartUploadCommand({ Bucket, Key: Key(key), UploadId: uploadId }),
        )
      } catch (cause) {
        if (!isNoSuchUpload(cause)) throw new UeError('UE_STORAGE_FAILED', { cause })
      }
    },

    async *openMultiparts(under) {
      const { sdk, client } = await connect()
      let keyMarker: string | undefined
      let idMarker: string | undefined
      do {
        let page: ListMultipartUploadsCommandOutput
        try {
          page = await client.send(
            new sdk.ListMultipartUploadsCommand({
              Bucket,
              Prefix: prefix + under,
              ...(keyMarker ? { KeyMarker: keyMarker } : {}),
              ...(idMarker ? { UploadIdMarker: idMarker } : {}),
            }),
          )
        } catch (cause) {
          throw new UeError('UE_STORAGE_FAILED', { cause })
        }
        for (const u of page.Uploads ?? [])
          if (u.Key?.startsWith(prefix) && u.UploadId)
            yield {
              key: u.Key.slice(prefix.length) as StorageKey,
              uploadId: u.UploadId,
              initiatedAt: u.Initiated?.getTime() ?? 0,
            }
        const more = page.IsTruncated === true
        keyMarker = more ? page.NextKeyMarker : undefined
        idMarker = more ? page.NextUploadIdMarker : undefined
      } while (keyMarker)
    },

    async close() {
      const open = connection
      connection = undefined
      if (open) (await open.catch(() => undefined))?.client.destroy()
    },
  }
}

function isNoSuchUpload(e: unknown): boolean {
  const err = e as { name?: string; $metadata?: { httpStatusCode?: number } } | null
  return err?.name === 'NoSuchUpload' || err?.$metadata?.httpStatusCode === 404
}
