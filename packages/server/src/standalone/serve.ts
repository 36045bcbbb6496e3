import { createServer, type Server, type ServerResponse, STATUS_CODES } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { bindVerdict, resolveAuthMode } from '../auth/mode.js'
import { loadConfig } from '../config/load.js'
import { isTrustedProxy, parseTrustedProxies, type Range } from '../http/client-address.js'
import { type NodeHandler, toNodeHandler } from '../http/node.js'
import { clientKey } from '../limits/client-key.js'
import { serverWithConfig, type UeditorOptions, type UeditorServer } from '../server.js'
import { UeError } from '../shared/errors.js'
import { consoleLogger } from '../shared/log.js'
import { checkPackages } from '../shared/optional-deps.js'
import { errorParts } from '../shared/respond.js'
import { loadOptionsOf } from '../start-up.js'

export interface RunningServer {
  readonly ue: UeditorServer
  readonly http: Server
  /** `http://host:port`, with the real port when 0 was asked for. */
  readonly url: string
  /**
   * Stops listening and closes idle connections at once, lets in-flight requests finish (up to
   * the grace time), each answer ending its connection, then closes the rest and the DB.
   */
  close(): Promise<void>
}

/** The standalone server: one node:http server in front of `ue.fetch`. */
export async function startServer(options: UeditorOptions = {}): Promise<RunningServer> {
  // The port is taken before anything is written: a start that cannot listen (port in use,
  // no permission) or may not listen there, or lacks a package its settings need, fails
  // before the data folder, the index or the temp spool are created.
  const config = loadConfig(loadOptionsOf(options))
  checkPackages(config)
  const { http: cfg } = config
  const verdict = bindVerdict(
    cfg.host,
    resolveAuthMode(config.auth, options.authorize !== undefined),
  )
  if (verdict === 'refuse')
    throw new UeError('UE_CONFIG_INVALID', {
      detail:
        `\n  - http.host: ${cfg.host} is not a loopback address and no authentication is ` +
        'configured; set UEDITOR_AUTH_TOKENS, UEDITOR_AUTH_JWT_SECRET or UEDITOR_AUTH_JWKS_URL ' +
        '(see docs/auth.md), or UEDITOR_AUTH=none to serve everyone on purpose',
    })
  if (verdict === 'warn')
    (options.logger ?? consoleLogger('warn')).warn(
      { host: cfg.host, auth: 'none' },
      'UEDITOR_AUTH=none on a non-loopback address: ANYONE who can reach this server can ' +
        'upload, list every stored file and capture remote images',
    )
  // Counted from request to the last byte written, so shutdown never cuts a response short.
  const inFlight = new Set<ServerResponse>()
  let idle: (() => void) | undefined
  let shuttingDown = false
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
      // A request that still arrives on an open connection while stopping is served like those
      // in flight (a proxy cannot send a refused upload elsewhere); its answer ends the connection.
      if (shuttingDown) res.setHeader('Connection', 'close')
      inFlight.add(res)
      res.once('close', () => {
        inFlight.delete(res)
        // A connection whose last answer went out before the shutdown began is idle now.
        if (shuttingDown) setImmediate(() => server.closeIdleConnections())
        if (inFlight.size === 0) idle?.()
      })
      handle(req, res)
    },
  )
  // Node hands a CONNECT (a proxy tunnel) to this event and drops the connection without one.
  server.on('connect', (_req, socket: Duplex) => refuseTunnel(socket))
  limitConnectionsPerClient(
    server,
    config.limits.connectionsPerClient,
    parseTrustedProxies(config.http.trustProxy),
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
    ue = await serverWithConfig(config, options)
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
      // The port closes at once and idle keep-alive connections with it, so a proxy in front
      // sends its next request to another node by itself (a refused connection never reached
      // this one). Requests in flight finish, each answer closing its connection.
      shuttingDown = true
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeIdleConnections()
      for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close')
      if (inFlight.size > 0) {
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

/**
 * Closes a new connection at once when its client address already holds `limit` of them. A
 * trusted proxy (`http.trustProxy`) carries many clients' connections and is not limited.
 */
function limitConnectionsPerClient(server: Server, limit: number, proxies: Range[]): void {
  if (limit <= 0) return
  const open = new Map<string, number>()
  server.on('connection', (socket: Socket) => {
    const peer = socket.remoteAddress ?? ''
    if (isTrustedProxy(peer, proxies)) return
    const key = clientKey(peer)
    const count = (open.get(key) ?? 0) + 1
    if (count > limit) {
      socket.destroy()
      return
    }
    open.set(key, count)
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1
      if (left === 0) open.delete(key)
      else open.set(key, left)
    })
  })
}

/** This server is no proxy: a CONNECT gets the catalogue's readable 405, then the connection ends. */
function refuseTunnel(socket: Duplex): void {
  socket.on('error', () => socket.destroy())
  const { status, headers, body } = errorParts(new UeError('UE_METHOD_NOT_ALLOWED'))
  const head = [`HTTP/1.1 ${status} ${STATUS_CODES[status]}`]
  for (const [name, value] of headers) head.push(`${name}: ${value}`)
  head.push(`Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close', '', '')
  socket.end(head.join('\r\n') + body)
}
