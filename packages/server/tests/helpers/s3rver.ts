import { randomBytes } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import type { Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { buffer } from 'node:stream/consumers'
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3'

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

export interface RunningS3rver {
  endpoint: string
  /** An SDK client for this server, for reading what the code under test stored. */
  client: S3Client
  /** Creates a bucket with a fresh name and returns the name. */
  createBucket(): Promise<string>
  /** The server's environment variables for storing in `bucket` of this server. */
  storageEnv(bucket: string): Record<string, string>
  /** Stops answering (connections refused), keeping what is stored. */
  stop(): Promise<void>
  /** Starts again on the same port with the same objects. */
  restart(): Promise<void>
  close(): Promise<void>
}

/**
 * s3rver on 127.0.0.1:0 with a temp folder. s3rver 3.7 lacks three behaviours of AWS S3 that our
 * driver relies on, so a middleware in front of it supplies them (documented AWS semantics):
 * a PUT is all or nothing (an aborted or short body stores nothing), `If-None-Match: *`
 * on PUT (and on a copy) answers 412 when the key exists, with same-key PUTs serialised so exactly one wins,
 * and listings come in UTF-8 binary order of the keys (s3rver walks its folders unsorted).
 * It also lacks ListParts and AbortMultipartUpload, which resumable and direct multipart
 * uploads use: a middleware answers them from s3rver's own folder of unfinished uploads.
 */
export async function startS3rver(): Promise<RunningS3rver> {
  const directory = await mkdtemp(join(tmpdir(), 'ue-s3rver-'))
  let app = await runS3rver(directory, 0)
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
    storageEnv: (bucket) => ({
      UEDITOR_STORAGE: 's3',
      UEDITOR_S3_BUCKET: bucket,
      UEDITOR_S3_REGION: 'us-east-1',
      UEDITOR_S3_ENDPOINT: endpoint,
      UEDITOR_S3_FORCE_PATH_STYLE: 'true',
      UEDITOR_S3_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      UEDITOR_S3_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    }),
    stop,
    async restart() {
      await stop()
      app = await runS3rver(directory, port)
      stopped = false
    },
    async close() {
      client.destroy()
      await stop()
      await rm(directory, { recursive: true, force: true })
    },
  }
}

async function runS3rver(directory: string, port: number): Promise<S3rverApp> {
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverCtor
  const app = new S3rver({
    address: '127.0.0.1',
    port,
    silent: true,
    directory,
    vhostBuckets: false,
  })
  app.middleware.unshift(awsPutSemantics(app))
  app.middleware.unshift(multipartListAndAbort(app))
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
function multipartListAndAbort(app: S3rverApp): Middleware {
  return async (ctx, next) => {
    const m = /^\/([^/]+)\/(.+)$/.exec(ctx.path)
    const uploadId = ctx.query.uploadId
    if (!m || typeof uploadId !== 'string' || !['GET', 'DELETE'].includes(ctx.method)) return next()
    if (!/^[0-9a-f]+$/.test(uploadId)) return s3Error(ctx, 404, 'NoSuchUpload', 'no such upload')
    const dir = join(app.store.getResourcePath(m[1] as string, undefined, 'uploads'), uploadId)
    let names: string[]
    try {
      names = await readdir(dir)
    } catch {
      return s3Error(ctx, 404, 'NoSuchUpload', 'The specified upload does not exist')
    }
    if (ctx.method === 'DELETE') {
      await rm(dir, { recursive: true, force: true })
      ctx.status = 204
      return
    }
    const numbers = names
      .filter((n) => /^\d+$/.test(n))
      .map(Number)
      .sort((a, b) => a - b)
    const parts = await Promise.all(
      numbers.map(async (n) => {
        const [info, md5] = await Promise.all([
          stat(join(dir, String(n))),
          readFile(join(dir, `${n}.md5`), 'utf8').catch(() => ''),
        ])
        return `<Part><PartNumber>${n}</PartNumber><ETag>"${md5}"</ETag><Size>${info.size}</Size><LastModified>${info.mtime.toISOString()}</LastModified></Part>`
      }),
    )
    ctx.status = 200
    ctx.type = 'application/xml'
    ctx.body =
      `<?xml version="1.0" encoding="UTF-8"?>\n<ListPartsResult><Bucket>${m[1]}</Bucket>` +
      `<Key>${escapeXml(decodeURIComponent(m[2] as string))}</Key><UploadId>${uploadId}</UploadId>` +
      `<PartNumberMarker>0</PartNumberMarker><NextPartNumberMarker>${numbers.at(-1) ?? 0}</NextPartNumberMarker>` +
      `<MaxParts>10000</MaxParts><IsTruncated>false</IsTruncated>${parts.join('')}</ListPartsResult>`
  }
}

function escapeXml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')
}

function s3Error(ctx: KoaContext, status: number, code: string, message: string): void {
  ctx.status = status
  ctx.type = 'application/xml'
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`
}
