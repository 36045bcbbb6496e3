import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  request,
  type Server,
  type ServerResponse,
} from 'node:http'
import type { AddressInfo } from 'node:net'

export interface MotoFront {
  /** The front's port on 127.0.0.1, the same after a restart. */
  port: number
  /** Closes the listener and every open connection: connections are refused. */
  stop(): Promise<void>
  /** Listens again on the same port. */
  restart(): Promise<void>
}

interface Upstream {
  status: number
  headers: IncomingHttpHeaders
  body: string
}

/**
 * An HTTP proxy on 127.0.0.1 in front of moto's S3 (moto keeps its objects in memory, so a
 * stopped S3 is this listener closed, never moto killed). It passes every call on unchanged,
 * but for what moto 5.2 does otherwise than AWS S3 and our code or tests rely on:
 *
 * - a multipart call (`?uploadId=`) for an upload id that is not an open upload of that very
 *   key is NoSuchUpload: moto binds an upload id to the bucket only (a part or completion for
 *   another key lands on it) and answers an unknown id on a part or completion with a 500;
 * - a copy with `If-None-Match: *` onto an existing key is PreconditionFailed (moto checks the
 *   header on a plain PUT only);
 * - writes with `If-None-Match: *` to one key are passed on one at a time, so exactly one
 *   wins: moto checks and stores without a lock;
 * - the answer to a browser's form POST carries the CORS headers of the bucket's rule for its
 *   origin (moto sets them on the preflight and on PUT and GET answers, not on a form POST).
 */
export async function startMotoFront(motoPort: number): Promise<MotoFront> {
  const queues = new Map<string, Promise<void>>()

  const upstream = (
    method: string,
    path: string,
    headers: OutgoingHttpHeaders = {},
  ): Promise<Upstream> =>
    new Promise((resolve, reject) => {
      const up = request(
        {
          host: '127.0.0.1',
          port: motoPort,
          method,
          path,
          // moto reads a call without one as anonymous, which may not read a private object.
          headers: { authorization: SIGNED, ...headers },
          agent: false,
        },
        (answer) => {
          const chunks: Buffer[] = []
          answer.on('data', (c: Buffer) => chunks.push(c))
          answer.on('error', reject)
          answer.on('end', () =>
            resolve({
              status: answer.statusCode ?? 502,
              headers: answer.headers,
              body: Buffer.concat(chunks).toString(),
            }),
          )
        },
      )
      up.on('error', reject)
      up.end()
    })

  const isOpenUpload = async (bucket: string, key: string, uploadId: string) => {
    const listed = await upstream('GET', `/${bucket}?uploads&prefix=${encodeURIComponent(key)}`)
    for (const [, upload] of listed.body.matchAll(/<Upload>([\s\S]*?)<\/Upload>/g)) {
      const k = /<Key>([\s\S]*?)<\/Key>/.exec(upload ?? '')?.[1]
      const id = /<UploadId>([\s\S]*?)<\/UploadId>/.exec(upload ?? '')?.[1]
      if (k !== undefined && unescapeXml(k) === key && id === uploadId) return true
    }
    return false
  }

  /** Passes the call on as it came; the answer goes back as moto gave it, plus `extra` headers. */
  const pass = (req: IncomingMessage, res: ServerResponse, extra?: () => Promise<Headers>) =>
    new Promise<void>((resolve) => {
      const { expect: _, ...headers } = req.headers // this server already said 100 Continue
      const up = request(
        { host: '127.0.0.1', port: motoPort, method: req.method, path: req.url, headers },
        async (answer) => {
          const added = extra ? await extra().catch(() => new Headers()) : new Headers()
          const out: OutgoingHttpHeaders = { ...answer.headers }
          for (const [name, value] of added) out[name] = value
          res.writeHead(answer.statusCode ?? 502, out)
          answer.pipe(res)
          answer.on('end', resolve)
          answer.on('error', () => {
            res.destroy()
            resolve()
          })
        },
      )
      up.on('error', () => {
        res.destroy()
        resolve()
      })
      // A client that goes away midway (a cut body) leaves moto a cut request: nothing is stored.
      const cut = () => {
        if (!req.complete) up.destroy()
      }
      if (req.closed) cut()
      else req.on('close', cut)
      res.on('close', () => {
        if (!res.writableFinished) {
          up.destroy()
          resolve()
        }
      })
      req.pipe(up)
    })

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://front')
    const [, bucket = '', rawKey] = /^\/([^/]*)(?:\/(.*))?$/.exec(url.pathname) ?? []
    const key = rawKey ? decodeURIComponent(rawKey) : undefined
    const uploadId = url.searchParams.get('uploadId')
    const method = req.method ?? 'GET'

    if (key !== undefined && uploadId !== null && !(await isOpenUpload(bucket, key, uploadId)))
      return refuse(req, res, 404, 'NoSuchUpload', 'The specified upload does not exist.')

    const writes =
      key !== undefined &&
      !url.searchParams.has('partNumber') &&
      ((method === 'PUT' && uploadId === null) || (method === 'POST' && uploadId !== null))
    if (writes && req.headers['if-none-match'] === '*') {
      const id = `${bucket}/${key}`
      const previous = queues.get(id) ?? Promise.resolve()
      const mine = previous.then(async () => {
        if (req.headers['x-amz-copy-source'] !== undefined) {
          const existing = await upstream('HEAD', url.pathname)
          if (existing.status === 200)
            return refuse(req, res, 412, 'PreconditionFailed', 'At least one precondition failed')
        }
        await pass(req, res)
      })
      const tail = mine.catch(() => {})
      queues.set(id, tail)
      try {
        await mine
      } finally {
        if (queues.get(id) === tail) queues.delete(id)
      }
      return
    }

    const origin = req.headers.origin
    if (method === 'POST' && key === undefined && url.search === '' && origin !== undefined) {
      return pass(req, res, async () => {
        const preflight = await upstream('OPTIONS', `/${bucket}`, {
          origin,
          'access-control-request-method': 'POST',
        })
        const cors = new Headers({ vary: 'Origin' })
        if (preflight.status !== 200) return cors
        for (const name of ['access-control-allow-origin', 'access-control-expose-headers']) {
          const value = preflight.headers[name]
          if (typeof value === 'string') cors.set(name, value)
        }
        return cors
      })
    }
    return pass(req, res)
  }

  const serve = () => {
    const server = createServer((req, res) => {
      handle(req, res).catch(() => res.destroy())
    })
    return server
  }
  let server: Server = serve()
  await listen(server, 0)
  const { port } = server.address() as AddressInfo
  let stopped = false
  return {
    port,
    async stop() {
      if (stopped) return
      stopped = true
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
    async restart() {
      if (!stopped) return
      server = serve()
      await listen(server, port)
      stopped = false
    },
  }
}

/** An Authorization header of the form moto expects (it checks no signature). */
const SIGNED =
  'AWS4-HMAC-SHA256 Credential=ue-test-access-key/20250101/us-east-1/s3/aws4_request, ' +
  'SignedHeaders=host, Signature=0'

/** Listens on 127.0.0.1:`port`; a port that is briefly still taken is tried again. */
async function listen(server: Server, port: number): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(port, '127.0.0.1', () => {
          server.removeListener('error', reject)
          resolve()
        })
      })
      return
    } catch (e) {
      if (attempt >= 20 || (e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e
      await new Promise((r) => setTimeout(r, 100))
    }
  }
}

/** An S3 error answer, after reading what the client sends (so its request ends cleanly). */
function refuse(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
): void {
  req.resume()
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>0</RequestId></Error>`
  res.writeHead(status, {
    'content-type': 'application/xml',
    'content-length': Buffer.byteLength(body),
  })
  res.end(body)
}

function unescapeXml(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCodePoint(Number.parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&amp;/g, '&')
}
