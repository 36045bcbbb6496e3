import { createServer, type IncomingMessage, request } from 'node:http'
import type { AddressInfo } from 'node:net'

/** An S3 error answer: what a bucket says when it refuses a call. */
export interface S3Fault {
  status: number
  code: string
  message: string
}

export interface S3FaultProxy {
  /** The endpoint to give the server instead of the S3 server's own. */
  endpoint: string
  /** Answers every call `matches` picks with `fault` instead of passing it on; null: none. */
  fail(matches: ((req: IncomingMessage) => boolean) | null, fault?: S3Fault): void
  /** How many calls were answered with a fault. */
  readonly failed: number
  /** Every call that came in, in order: its method, path with query, and headers. */
  readonly calls: readonly { method: string; url: string; headers: IncomingMessage['headers'] }[]
  /**
   * Keeps the calls `matches` picks from the S3 server until `release()`, as a slow bucket
   * does: `held` resolves once one is kept. Calls that come in after the release pass at once.
   */
  hold(matches: (req: IncomingMessage) => boolean): { held: Promise<void>; release(): void }
  /** Resolves once the S3 server has answered a call `matches` picks. */
  answered(matches: (req: IncomingMessage) => boolean): Promise<void>
  close(): Promise<void>
}

/** ListMultipartUploads: `GET /<bucket>?uploads`. */
export const listsMultipartUploads = (req: IncomingMessage) =>
  req.method === 'GET' && /^\/[^/?]+\/?\?(?:.*&)?uploads(?:[=&]|$)/.test(req.url ?? '')

/** UploadPart of part `n`: `PUT /<bucket>/<key>?partNumber=<n>&uploadId=…`. */
export const uploadsPart = (n: number) => (req: IncomingMessage) =>
  req.method === 'PUT' && new RegExp(`[?&]partNumber=${n}(?:&|$)`).test(req.url ?? '')

interface Hold {
  matches: (req: IncomingMessage) => boolean
  released: Promise<void>
  kept: () => void
  release: () => void
}

/**
 * A pass-through proxy on 127.0.0.1 in front of an S3 server (moto's, in these tests) that
 * refuses the calls it is told to with an S3 error, as a bucket without a permission, or one
 * that lacks a method, does, and keeps back those it is told to hold. Every other call reaches
 * the S3 server unchanged (the `Host` header too, so signatures made for the proxy's address
 * still verify).
 */
export async function startS3FaultProxy(upstream: string): Promise<S3FaultProxy> {
  const target = new URL(upstream)
  let rule: { matches: (req: IncomingMessage) => boolean; fault: S3Fault } | null = null
  let failed = 0
  const calls: S3FaultProxy['calls'][number][] = []
  const holds: Hold[] = []
  const watches: { matches: (req: IncomingMessage) => boolean; done: () => void }[] = []
  const server = createServer(async (req, res) => {
    calls.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers })
    if (rule?.matches(req)) {
      failed++
      const { status, code, message } = rule.fault
      req.resume()
      res.writeHead(status, { 'content-type': 'application/xml' })
      res.end(
        `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>0</RequestId></Error>`,
      )
      return
    }
    const hold = holds.find((h) => h.matches(req))
    if (hold) {
      hold.kept()
      await hold.released
    }
    const up = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
        answer.on('end', () => {
          for (const w of watches) if (w.matches(req)) w.done()
        })
      },
    )
    up.on('error', () => res.destroy())
    req.pipe(up)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    endpoint: `http://127.0.0.1:${port}`,
    fail(matches, fault) {
      rule = matches && fault ? { matches, fault } : null
    },
    get failed() {
      return failed
    },
    calls,
    hold(matches) {
      let kept = () => {}
      const held = new Promise<void>((resolve) => {
        kept = resolve
      })
      let release = () => {}
      const released = new Promise<void>((resolve) => {
        release = resolve
      })
      const hold: Hold = {
        matches,
        released,
        kept,
        release() {
          const at = holds.indexOf(hold)
          if (at >= 0) holds.splice(at, 1)
          release()
        },
      }
      holds.push(hold)
      return { held, release: hold.release }
    },
    answered(matches) {
      return new Promise((done) => watches.push({ matches, done }))
    },
    async close() {
      for (const hold of [...holds]) hold.release()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
