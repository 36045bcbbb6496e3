import { randomBytes } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import type { Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { buffer } from 'node:stream/consumers'
import { CreateBucketCommand, PutBucketCorsCommand, S3Client } from '@aws-sdk/client-s3'

/** The parts of s3rver (a Koa app) these tests use; the package ships no types. */
interface KoaContext {
  method: string
  path: string
  query: Record<string, unknown>
  req: Readable & { headers: Record<string, string | string[] | undefined> }
  status: number
  type: string
  body: unknown
  respond: boolean
  get(header: string): string
}
type Middleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void>
interface ListOptions {
  delimiter?: string
  startAfter?: string
  prefix?: string
  maxKeys?: number
}
interface ListResult {
  objects: { key: string }[]
  commonPrefixes: string[]
  isTruncated: boolean
}
interface S3rverStore {
  existsObject(bucket: string, key: string): Promise<boolean>
  getResourcePath(bucket: string, key: string | undefined, resource: string): string
  listObjects(bucket: string, options: ListOptions): Promise<ListResult>
}
interface S3rverApp {
  middleware: Middleware[]
  store: S3rverStore
  run(): Promise<AddressInfo>
  httpServer: Server
  close(): Promise<void>
}
type S3rverCtor = new (options: Record<string, unknown>) => S3rverApp

export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }

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
  close(): Promise<void>
}

/**
 * s3rver on 127.0.0.1:0 with a temp folder. s3rver 3.7 lacks behaviours of AWS S3 that our
 * code relies on, so middlewares in front of it supply them (documented AWS semantics):
 * a PUT is all or nothing (an aborted or short body stores nothing), `If-None-Match: *`
 * on PUT (and on a copy) answers 412 when the key exists, with same-key PUTs serialised so exactly one wins,
 * and listings come in UTF-8 binary order of the keys (s3rver walks its folders unsorted).
 * Of multipart uploads s3rver has create, upload part and complete only: ListParts,
 * AbortMultipartUpload and ListMultipartUploads are answered here from its upload folders, and
 * a part or completion for an upload id of another key (or none) is NoSuchUpload, as on S3.
 * s3rver checks no POST policy: its conditions (key, type, size range, expiry) are not enforced.
 */
export async function startS3rver(
  o: {
    /** false: s3rver as it is, without the multipart calls it lacks (a store that cannot do them). */
    multipart?: boolean
  } = {},
): Promise<RunningS3rver> {
  const directory = await mkdtemp(join(tmpdir(), 'ue-s3rver-'))
  const multipart = o.multipart ?? true
  let app = await runS3rver(directory, 0, multipart)
  const { port } = app.httpServer.address() as AddressInfo
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    app.httpServer.closeAllConnections()
    await app.close()
  }
  const endpoint = `http://127.0.0.1:${port}`
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
    stop,
    async restart() {
      await stop()
      app = await runS3rver(directory, port, multipart)
      stopped = false
    },
    async close() {
      client.destroy()
      await stop()
      await rm(directory, { recursive: true, force: true })
    },
  }
}

async function runS3rver(directory: string, port: number, multipart: boolean): Promise<S3rverApp> {
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverCtor
  const app = new S3rver({
    address: '127.0.0.1',
    port,
    silent: true,
    directory,
    vhostBuckets: false,
  })
  app.middleware.unshift(awsPutSemantics(app))
  if (multipart) app.middleware.unshift(multipartExtras(directory))
  sortedListings(app.store)
  await app.run()
  return app
}

/** Lists everything, then sorts by bytes and pages by `startAfter` as S3 does. */
function sortedListings(store: S3rverStore): void {
  const unsorted = store.listObjects.bind(store)
  store.listObjects = async (bucket, options) => {
    if (options.delimiter) return unsorted(bucket, options)
    const all = await unsorted(bucket, { ...options, startAfter: '', maxKeys: Infinity })
    const after = Buffer.from(options.startAfter ?? '')
    const objects = all.objects
      .filter((o) => Buffer.compare(Buffer.from(o.key), after) > 0)
      .sort((a, b) => Buffer.compare(Buffer.from(a.key), Buffer.from(b.key)))
    const maxKeys = options.maxKeys ?? Infinity
    return {
      objects: objects.slice(0, maxKeys),
      commonPrefixes: all.commonPrefixes,
      isTruncated: objects.length > maxKeys,
    }
  }
}

function awsPutSemantics(app: S3rverApp): Middleware {
  const queues = new Map<string, Promise<void>>()
  return async (ctx, next) => {
    const m = /^\/([^/]+)\/(.+)$/.exec(ctx.path)
    const plainPut =
      ctx.method === 'PUT' &&
      m !== null &&
      !['uploadId', 'partNumber', 'tagging', 'acl'].some((q) => q in ctx.query) &&
      ctx.get('x-amz-copy-source') === ''
    const copy = ctx.method === 'PUT' && m !== null && ctx.get('x-amz-copy-source') !== ''
    if (copy && ctx.get('if-none-match') === '*') {
      const exists = await app.store.existsObject(
        m[1] as string,
        decodeURIComponent(m[2] as string),
      )
      if (exists) return s3Error(ctx, 412, 'PreconditionFailed', 'At least one precondition failed')
    }
    if (!plainPut) return next()
    const bucket = m[1] as string
    const key = decodeURIComponent(m[2] as string)
    const id = `${bucket}/${key}`

    const previous = queues.get(id) ?? Promise.resolve()
    let release = () => {}
    const mine = new Promise<void>((resolve) => {
      release = resolve
    })
    const tail = previous.then(() => mine)
    queues.set(id, tail)
    await previous
    try {
      let body: Buffer
      try {
        body = await buffer(ctx.req)
      } catch {
        ctx.respond = false // the client went away: nothing is stored
        return
      }
      if (body.length !== Number(ctx.get('content-length'))) {
        return s3Error(ctx, 400, 'IncompleteBody', 'fewer bytes than Content-Length')
      }
      if (ctx.get('if-none-match') === '*' && (await app.store.existsObject(bucket, key))) {
        return s3Error(ctx, 412, 'PreconditionFailed', 'At least one precondition failed')
      }
      // s3rver stores `ctx.req` as the object; hand it the complete body instead.
      ctx.req = Object.assign(Readable.from([body]), { headers: ctx.req.headers })
      await next()
    } finally {
      release()
      if (queues.get(id) === tail) queues.delete(id)
    }
  }
}

/** ListParts (`GET ?uploadId=`) and AbortMultipartUpload (`DELETE ?uploadId=`), as AWS answers them. */
function s3Error(ctx: KoaContext, status: number, code: string, message: string): void {
  ctx.status = status
  ctx.type = 'application/xml'
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`
}

/** The multipart calls s3rver 3.7 lacks, over its own folder of unfinished uploads. */
function multipartExtras(directory: string): Middleware {
  const uploadsOf = (bucket: string) => join(directory, bucket, '._S3rver_uploads')
  const keyOf = (bucket: string, uploadId: string) =>
    /^[0-9a-f]+$/.test(uploadId)
      ? readFile(join(uploadsOf(bucket), uploadId, 'key'), 'utf8').catch(() => null)
      : Promise.resolve(null)
  const noSuchUpload = (ctx: KoaContext) =>
    s3Error(ctx, 404, 'NoSuchUpload', 'The specified upload does not exist.')
  return async (ctx, next) => {
    const m = /^\/([^/]+)(?:\/(.*))?$/.exec(ctx.path)
    if (!m) return next()
    const bucket = m[1] as string
    const key = m[2] ? decodeURIComponent(m[2]) : undefined
    const uploadId = typeof ctx.query.uploadId === 'string' ? ctx.query.uploadId : undefined
    if (key === undefined && ctx.method === 'GET' && 'uploads' in ctx.query) {
      const prefix = typeof ctx.query.prefix === 'string' ? ctx.query.prefix : ''
      const ids = await readdir(uploadsOf(bucket)).catch(() => [] as string[])
      const uploads: string[] = []
      for (const id of ids.sort()) {
        const k = await keyOf(bucket, id)
        if (k === null || !k.startsWith(prefix)) continue
        const { mtime } = await stat(join(uploadsOf(bucket), id))
        uploads.push(
          `<Upload><Key>${xml(k)}</Key><UploadId>${id}</UploadId><Initiated>${mtime.toISOString()}</Initiated></Upload>`,
        )
      }
      return xmlBody(
        ctx,
        `<ListMultipartUploadsResult><Bucket>${bucket}</Bucket><IsTruncated>false</IsTruncated>${uploads.join('')}</ListMultipartUploadsResult>`,
      )
    }
    if (key === undefined || uploadId === undefined) return next()
    if ((await keyOf(bucket, uploadId)) !== key) return noSuchUpload(ctx)
    const folder = join(uploadsOf(bucket), uploadId)
    if (ctx.method === 'DELETE') {
      await rm(folder, { recursive: true, force: true })
      ctx.status = 204
      ctx.body = ''
      return
    }
    if (ctx.method !== 'GET') return next()
    const parts: string[] = []
    const numbers = (await readdir(folder)).filter((f) => /^\d+$/.test(f)).map(Number)
    for (const n of numbers.sort((a, b) => a - b)) {
      const { size, mtime } = await stat(join(folder, String(n)))
      const md5 = await readFile(join(folder, `${n}.md5`), 'utf8')
      parts.push(
        `<Part><PartNumber>${n}</PartNumber><ETag>"${md5}"</ETag><Size>${size}</Size><LastModified>${mtime.toISOString()}</LastModified></Part>`,
      )
    }
    return xmlBody(
      ctx,
      `<ListPartsResult><Bucket>${bucket}</Bucket><Key>${xml(key)}</Key><UploadId>${uploadId}</UploadId><IsTruncated>false</IsTruncated>${parts.join('')}</ListPartsResult>`,
    )
  }
}

function xmlBody(ctx: KoaContext, body: string): void {
  ctx.status = 200
  ctx.type = 'application/xml'
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n${body}`
}

function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}
