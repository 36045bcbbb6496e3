/**
 * The baselines: the least a node:http server can do for the same request, in its own process.
 *   bytes <file> <content-type>   answers every request with the file's bytes
 *   disk <folder>                 streams each request body to a new file, then answers
 *   bytes-after <file> <type> <µs>  a reference point: as `bytes`, after that many microseconds
 *                                 of busy work per request, to show what a server may spend
 *   fastify-bytes <file> <type>   a reference point, not a target: Fastify (its defaults, no
 *                                 plugins) answering the file's bytes on its own route
 *   listen                        answers every request with an empty 200: a server ready as
 *                                 soon as it listens, for the start-up rows
 */
import { createWriteStream, readFileSync } from 'node:fs'
import { unlink } from 'node:fs/promises'
import { createServer, type RequestListener } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'

const [mode, arg, contentType] = process.argv.slice(2)

function sendBytes(file: string, type: string, workMicros = 0): RequestListener {
  const body = readFileSync(file)
  const headers = { 'Content-Type': type, 'Content-Length': body.length }
  return (_req, res) => {
    if (workMicros > 0) busyFor(workMicros)
    res.writeHead(200, headers)
    res.end(body)
  }
}

/** Holds the thread, as a request's own JavaScript would. */
function busyFor(micros: number) {
  const until = performance.now() + micros / 1000
  while (performance.now() < until);
}

function streamToDisk(folder: string): RequestListener {
  const answer = Buffer.from('{"state":"SUCCESS"}')
  let n = 0
  return (req, res) => {
    const path = join(folder, `${process.pid}-${n++}.bin`)
    pipeline(req, createWriteStream(path)).then(
      // The file is kept, as the server keeps every upload: a file deleted at once never has its
      // pages written back from the cache, work the server cannot skip. The bench removes it
      // when the run is over.
      () => {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': answer.length })
        res.end(answer)
      },
      () => {
        res.destroy()
        void unlink(path).catch(() => {})
      },
    )
  }
}

if (mode === 'fastify-bytes' && arg && contentType) {
  const { fastify } = await import('fastify')
  const body = readFileSync(arg)
  const app = fastify({ logger: false, keepAliveTimeout: 30_000 })
  app.get('/ueditor', (_request, reply) => {
    void reply.type(contentType).send(body)
  })
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  process.stderr.write(`bare ${mode} server listening on ${address}\n`)
  process.once('SIGTERM', () => void app.close())
} else serveBare()

function serveBare() {
  const workMicros = Number(process.argv[5])
  const listener: RequestListener | undefined =
    mode === 'listen'
      ? (_req, res) => res.end()
      : mode === 'bytes' && arg && contentType
        ? sendBytes(arg, contentType)
        : mode === 'bytes-after' && arg && contentType && workMicros > 0
          ? sendBytes(arg, contentType, workMicros)
          : mode === 'disk' && arg
            ? streamToDisk(arg)
            : undefined
  if (!listener)
    throw new Error(
      'usage: bare-server listen | bytes <file> <content-type> | bytes-after <file> <content-type> <µs> | disk <folder> | fastify-bytes <file> <content-type>',
    )

  const server = createServer({ keepAliveTimeout: 30_000 }, listener)
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo
    process.stderr.write(`bare ${mode} server listening on http://127.0.0.1:${port}\n`)
  })
  process.once('SIGTERM', () => {
    server.close()
    server.closeAllConnections()
  })
}
