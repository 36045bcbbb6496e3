import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
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
interface S3rverApp {
  middleware: Middleware[]
  store: { existsObject(bucket: string, key: string): Promise<boolean> }
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
  close(): Promise<void>
}

/**
 * s3rver on 127.0.0.1:0 with a temp folder. s3rver 3.7 lacks two behaviours of AWS S3 that our
 * driver relies on, so a middleware in front of it supplies them (documented AWS semantics):
 * a PUT is all or nothing (an aborted or short body stores nothing), and `If-None-Match: *`
 * on PUT answers 412 when the key exists, with same-key PUTs serialised so exactly one wins.
 */
export async function startS3rver(): Promise<RunningS3rver> {
  const directory = await mkdtemp(join(tmpdir(), 'ue-s3rver-'))
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverCtor
  const app = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    vhostBuckets: false,
  })
  app.middleware.unshift(awsPutSemantics(app))
  const { port } = await app.run()
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
    async close() {
      client.destroy()
      app.httpServer.closeAllConnections()
      await app.close()
      await rm(directory, { recursive: true, force: true })
    },
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

function s3Error(ctx: KoaContext, status: number, code: string, message: string): void {
  ctx.status = status
  ctx.type = 'application/xml'
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`
}
