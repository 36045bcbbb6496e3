import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type LoadOptions, loadConfig } from '../config/load.js'
import { type NodeHandler, toNodeHandler } from '../http/node.js'
import { createUeditorServer, type UeditorOptions, type UeditorServer } from '../server.js'

export interface RunningServer {
  readonly ue: UeditorServer
  readonly http: Server
  /** `http://host:port`, with the real port when 0 was asked for. */
  readonly url: string
  /** Stops accepting, lets in-flight requests finish (up to the grace time), closes the DB. */
  close(): Promise<void>
}

/** The standalone server: one node:http server in front of `ue.fetch`. */
export async function startServer(options: UeditorOptions = {}): Promise<RunningServer> {
  // The port is taken before anything is written: a start that cannot listen (port in use,
  // no permission) fails before the data folder, the index or the temp spool are created.
  const { http: cfg } = loadConfig(loadOptionsOf(options))
  // Counted from request to the last byte written, so shutdown never cuts a response short.
  let inFlight = 0
  let idle: (() => void) | undefined
  let handle: NodeHandler = (_req, res) => {
    res.writeHead(503, { 'Content-Type': 'application/json; charset=utf-8', 'Retry-After': '1' })
    res.end(JSON.stringify({ error: { code: 'UE_SHUTTING_DOWN', message: 'Starting' } }))
  }
  const server = createServer(
    {
      headersTimeout: cfg.headersTimeoutMs,
      // Node only checks that timeout this often (30 s by default), doubling a slowloris' hold.
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, cfg.headersTimeoutMs / 4)),
      requestTimeout: 0,
      keepAliveTimeout: 5_000,
    },
    (req, res) => {
      inFlight++
      res.once('close', () => {
        inFlight--
        if (inFlight === 0) idle?.()
      })
      handle(req, res)
    },
  )
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(cfg.port, cfg.host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  let ue: UeditorServer
  try {
    ue = await createUeditorServer(options)
  } catch (e) {
    await new Promise((resolve) => server.close(resolve))
    throw e
  }
  handle = toNodeHandler(ue.fetch)
  const address = server.address() as AddressInfo
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address

  let closing: Promise<void> | undefined
  const close = () => {
    closing ??= (async () => {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeIdleConnections()
      if (inFlight > 0) {
        const drained = new Promise<void>((resolve) => {
          idle = resolve
        })
        const grace = new Promise<void>((resolve) =>
          setTimeout(resolve, cfg.shutdownGraceMs).unref(),
        )
        await Promise.race([drained, grace])
      }
      server.closeAllConnections()
      await stopped
      await ue.close()
    })()
    return closing
  }
  return { ue, http: server, url: `http://${host}:${address.port}`, close }
}

/** The same layers `createUeditorServer` reads, to know the address before it runs. */
function loadOptionsOf(options: UeditorOptions): LoadOptions {
  const o: LoadOptions = { overrides: options.config ?? {} }
  if (options.configFile !== undefined) o.configFile = options.configFile
  if (options.env !== undefined) o.env = options.env
  return o
}
