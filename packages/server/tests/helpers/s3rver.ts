import { randomBytes } from 'node:crypto'
import { CreateBucketCommand, PutBucketCorsCommand, S3Client } from '@aws-sdk/client-s3'
import { startMoto } from './moto.js'
import { startMotoFront } from './moto-front.js'

/**
 * The S3 server of the tests is moto's (`moto_server`, see moto.ts); this module's names are
 * historic, from when it was s3rver. `startS3`, `RunningS3` and `S3_CREDENTIALS` are the same.
 */

/** moto takes any keys (it checks no signatures); the server under test signs with these. */
export const S3RVER_CREDENTIALS = {
  accessKeyId: 'ue-test-access-key',
  secretAccessKey: 'ue-test-secret-key',
}
export const S3_CREDENTIALS = S3RVER_CREDENTIALS

export interface S3StorageSection {
  driver: 's3'
  bucket: string
  endpoint: string
  forcePathStyle: true
  accessKeyId: string
  secretAccessKey: string
  prefix?: string
}

export interface RunningS3rver {
  endpoint: string
  /** An SDK client for this server, for reading what the code under test stored. */
  client: S3Client
  /** Creates a bucket with a fresh name and returns the name. */
  createBucket(): Promise<string>
  /** Lets pages of `origins` POST and PUT to `bucket` and read the ETag (docs/uploads.md's rule). */
  allowOrigins(bucket: string, origins: string[]): Promise<void>
  /** The server's environment variables for storing in `bucket` of this server. */
  storageEnv(bucket: string): Record<string, string>
  /** The server config's `storage` section for storing in `bucket` of this server. */
  storageConfig(bucket: string, prefix?: string): S3StorageSection
  /** Stops answering (connections refused), keeping what is stored. */
  stop(): Promise<void>
  /** Starts again on the same port with the same objects. */
  restart(): Promise<void>
  /** Ends the S3 server and everything it stored. */
  close(): Promise<void>
}
export type RunningS3 = RunningS3rver

/**
 * An S3 server of its own on 127.0.0.1: a moto process, with a proxy in front (moto-front.ts)
 * that `stop()` and `restart()` close and open (moto keeps its objects in memory), and that
 * makes up for what moto does otherwise than S3 where our code relies on it. Left as moto has
 * it: no signature is checked (any keys do; an unsigned call is anonymous), nor any POST policy
 * condition (key, type, size range, expiry), so what the server signs is checked by reading the
 * policy it wrote; every multipart upload is listed as initiated on 2010-11-10; a part but the
 * last must have 5 MiB, as on S3. Starting moto takes a few seconds: share one per file.
 */
export async function startS3rver(): Promise<RunningS3rver> {
  const moto = await startMoto()
  let front: Awaited<ReturnType<typeof startMotoFront>>
  try {
    front = await startMotoFront(moto.port)
  } catch (e) {
    await moto.close()
    throw e
  }
  const endpoint = `http://127.0.0.1:${front.port}`
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { ...S3RVER_CREDENTIALS }, // the SDK writes into the object it is given
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  })
  return {
    endpoint,
    client,
    async createBucket() {
      const name = `ue-${randomBytes(6).toString('hex')}`
      await client.send(new CreateBucketCommand({ Bucket: name }))
      return name
    },
    async allowOrigins(bucket, origins) {
      await client.send(
        new PutBucketCorsCommand({
          Bucket: bucket,
          CORSConfiguration: {
            CORSRules: [
              {
                AllowedOrigins: origins,
                AllowedMethods: ['GET', 'POST', 'PUT'],
                AllowedHeaders: ['*'],
                ExposeHeaders: ['ETag'],
                MaxAgeSeconds: 600,
              },
            ],
          },
        }),
      )
    },
    storageEnv: (bucket) => ({
      UEDITOR_STORAGE: 's3',
      UEDITOR_S3_BUCKET: bucket,
      UEDITOR_S3_REGION: 'us-east-1',
      UEDITOR_S3_ENDPOINT: endpoint,
      UEDITOR_S3_FORCE_PATH_STYLE: 'true',
      UEDITOR_S3_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      UEDITOR_S3_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    }),
    storageConfig: (bucket, prefix) => ({
      driver: 's3',
      bucket,
      endpoint,
      forcePathStyle: true,
      ...S3RVER_CREDENTIALS,
      ...(prefix === undefined ? {} : { prefix }),
    }),
    stop: () => front.stop(),
    restart: () => front.restart(),
    async close() {
      client.destroy()
      await front.stop()
      await moto.close()
    },
  }
}
export const startS3 = startS3rver
