import { lookup as dnsLookup } from 'node:dns/promises'
import type { Socket } from 'node:net'
import type { Readable } from 'node:stream'
import type { Agent, buildConnector } from 'undici'
import { deadline } from '../../shared/deadline.js'
import { isUeError, UeError } from '../../shared/errors.js'
import type { Spool, SpooledFile } from '../temp-file.js'
import {
  type AddressPolicy,
  bareHostname,
  createAddressPolicy,
  isIpLiteral,
  parseRemoteUrl,
} from './guard.js'
import { skipInterimResponses } from './interim.js'

export interface ResolvedAddress {
  address: string
  family: number
}

/** Resolves a host name to every address it has (like `dns.lookup(name, { all: true })`). */
export type HostLookup = (hostname: string) => Promise<readonly ResolvedAddress[]>

/** Where a connection goes once the guard has checked the address. */
export interface DialTarget {
  /** The checked IP address that is dialled. */
  address: string
  port: number
  protocol: 'http:' | 'https:'
  /** The URL's host name: TLS server name and certificate identity for https. */
  hostname: string
}

/** Opens the socket to an already checked address. */
export type Dialer = (target: DialTarget) => Promise<Socket>

export interface RemoteFetcherOptions {
  /** `catcher.allowHosts`: exact hosts or host:port allowed even when not public. */
  allowHosts: readonly string[]
  connectTimeoutMs: number
  /** The whole fetch of one source, redirects and body included. */
  timeoutMs: number
  maxRedirects: number
  /** '' sends no User-Agent. */
  userAgent: string
  /** 'origin' sends the image URL's own origin, which passes ordinary hotlink protection. */
  referer: 'none' | 'origin'
  /** Testing/advanced hook: replaces the DNS lookup (default: `dns.lookup`, all addresses). */
  lookup?: HostLookup | undefined
  /** Testing/advanced hook: replaces the socket connector below the address guard. */
  connect?: Dialer | undefined
}

/** One connection attempt of a capture: the host asked for, the address checked, the verdict. */
export interface ConnectAttempt {
  host: string
  address: string
  allowed: boolean
}

export interface FetchImageOptions {
  spool: Spool
  /** Byte cap, enforced while streaming. */
  maxBytes: number
  /** The `Accept` header to send. */
  accept: string
  signal?: AbortSignal | undefined
  /** Told of every address the guard checked for this fetch, redirect hops included. */
  onConnect?: ((attempt: ConnectAttempt) => void) | undefined
}

export interface RemoteFetcher {
  /**
   * GETs `url` into a spool file. Throws UE_REMOTE_FORBIDDEN (address policy),
   * UE_REMOTE_FAILED (anything else that went wrong on the way) or UE_FILE_TOO_LARGE.
   */
  fetchImage(url: URL, o: FetchImageOptions): Promise<SpooledFile>
  /**
   * Whether the URL's host is listed in `catcher.allowHosts`: an operator's explicit choice,
   * which also overrides `catcherLocalDomain`.
   */
  isAllowListed(url: URL): boolean
  close(): Promise<void>
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])

// undici loads with the first capture: most servers never capture an image.
let loaded: Promise<typeof import('undici')> | undefined
const undici = () => (loaded ??= import('undici'))

/**
 * The catcher's HTTP client. Every connection goes through a guarded connector that resolves
 * the host, checks every resolved address against the policy and dials the checked address
 * itself, so what is checked is what is dialled (DNS rebinding gets nowhere). Keep-alive is
 * off, so every request, every redirect hop included, makes a fresh, checked connection.
 */
export function createRemoteFetcher(o: RemoteFetcherOptions): RemoteFetcher {
  const policy = createAddressPolicy(o.allowHosts)
  const lookup = o.lookup ?? systemLookup
  const dial = o.connect ?? undiciDialer(o)
  const agents = new Set<Agent>()

  async function fetchImage(url: URL, f: FetchImageOptions): Promise<SpooledFile> {
    const { Agent } = await undici()
    const limit = deadline(
      o.timeoutMs,
      () => new UeError('UE_REMOTE_FAILED', { detail: 'source deadline' }),
      f.signal,
    )
    // One agent per fetch (keep-alive is off anyway), so its connector knows which capture
    // each checked address belongs to.
    const agent = new Agent({
      connect: guardedConnector(policy, lookup, dial, o, f.onConnect),
      pipelining: 0,
    })
    agents.add(agent)
    try {
      return await fetchHops(url, f, limit.signal, agent)
    } finally {
      limit.dispose()
      agents.delete(agent)
      void agent.destroy().catch(() => undefined)
    }
  }

  async function fetchHops(
    url: URL,
    f: FetchImageOptions,
    signal: AbortSignal,
    agent: Agent,
  ): Promise<SpooledFile> {
    const { request } = await undici()
    let current = url
    for (let hop = 0; ; hop++) {
      const response = await request(current, {
        dispatcher: agent,
        method: 'GET',
        headers: requestHeaders(current, f.accept, o),
        signal,
        headersTimeout: o.timeoutMs,
        bodyTimeout: o.timeoutMs,
        // The body buffers up to the byte cap, so a spool write slower than the network never
        // pauses undici's HTTP/1 parser: a source that closes its connection while the parser
        // is paused ends the whole process with an uncatchable assertion in undici 7 (fixed
        // only in undici 8, which needs Node 22.19); docs/security.md, row S64.
        highWaterMark: f.maxBytes + 1,
      }).catch((e: unknown) => {
        throw remoteError(e)
      })
      const { statusCode, headers, body } = response
      if (REDIRECT_STATUSES.has(statusCode)) {
        discard(body)
        const location = headers.location
        if (typeof location !== 'string' || hop >= o.maxRedirects)
          throw new UeError('UE_REMOTE_FAILED', { detail: 'redirect' })
        current = redirectTarget(location, current)
        continue
      }
      const encoding = String(headers['content-encoding'] ?? 'identity').toLowerCase()
      if (statusCode !== 200 || encoding !== 'identity') {
        discard(body)
        throw new UeError('UE_REMOTE_FAILED', { detail: `status ${statusCode}` })
      }
      const length = Number(headers['content-length'])
      if (Number.isFinite(length) && length > f.maxBytes) {
        discard(body)
        throw new UeError('UE_FILE_TOO_LARGE')
      }
      try {
        return await f.spool.write(body, f.maxBytes, lastPathSegment(url))
      } catch (e) {
        throw remoteError(e)
      }
    }
  }

  return {
    fetchImage,
    isAllowListed: (url) =>
      policy.isAllowListed(
        bareHostname(url.hostname),
        Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
      ),
    close: async () => {
      await Promise.all([...agents].map((a) => a.destroy().catch(() => undefined)))
    },
  }
}

/** Drops an unread body; its abort error is expected and not worth an unhandled event. */
function discard(body: Readable): void {
  body.on('error', () => {})
  body.destroy()
}

function requestHeaders(url: URL, accept: string, o: RemoteFetcherOptions): Record<string, string> {
  const headers: Record<string, string> = { accept, 'accept-encoding': 'identity' }
  if (o.userAgent) headers['user-agent'] = o.userAgent
  if (o.referer === 'origin') headers.referer = `${url.origin}/`
  return headers
}

/** A redirect is parsed like a source; one that is not an http(s) URL ends the fetch. */
function redirectTarget(location: string, base: URL): URL {
  try {
    return parseRemoteUrl(location, base)
  } catch {
    throw new UeError('UE_REMOTE_FAILED', { detail: 'bad redirect' })
  }
}

/** Keeps our own refusals (policy, size); everything else is one generic failure. */
function remoteError(e: unknown): UeError {
  for (let err = e, depth = 0; err && depth < 5; err = (err as Error).cause, depth++) {
    if (isUeError(err) && err.code !== 'UE_INTERNAL') return err
  }
  return new UeError('UE_REMOTE_FAILED', { cause: e })
}

/** The display name of a source: its last path segment, decoded when possible. */
function lastPathSegment(url: URL): string {
  const segment = url.pathname.split('/').pop() ?? ''
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

const systemLookup: HostLookup = (hostname) => dnsLookup(hostname, { all: true })

type UndiciConnector = ReturnType<typeof buildConnector>

/**
 * undici's connector, wrapped so that the guard runs first: resolve, check every address
 * (one forbidden answer refuses the whole name), then dial the first address as a literal.
 */
function guardedConnector(
  policy: AddressPolicy,
  lookup: HostLookup,
  dial: Dialer,
  o: { connectTimeoutMs: number },
  onConnect: FetchImageOptions['onConnect'],
): UndiciConnector {
  return (opts, callback) => {
    let settled = false
    const finish = (err: Error | null, socket?: Socket) => {
      if (settled) {
        socket?.destroy()
        return
      }
      settled = true
      clearTimeout(timer)
      if (err || !socket) callback(err ?? new UeError('UE_REMOTE_FAILED'), null)
      else callback(null, socket)
    }
    const timer = setTimeout(
      () => finish(new UeError('UE_REMOTE_FAILED', { detail: 'connect timeout' })),
      o.connectTimeoutMs,
    )
    checkedDial(opts, policy, lookup, dial, onConnect).then(
      (socket) => finish(null, skipInterimResponses(socket)),
      (e: unknown) => finish(e instanceof Error ? e : new UeError('UE_REMOTE_FAILED')),
    )
  }
}

async function checkedDial(
  opts: { hostname: string; protocol: string; port: string },
  policy: AddressPolicy,
  lookup: HostLookup,
  dial: Dialer,
  onConnect: FetchImageOptions['onConnect'],
): Promise<Socket> {
  const protocol = opts.protocol === 'https:' ? 'https:' : 'http:'
  const hostname = bareHostname(opts.hostname)
  const port = Number(opts.port) || (protocol === 'https:' ? 443 : 80)
  const addresses = isIpLiteral(hostname)
    ? [{ address: hostname, family: hostname.includes(':') ? 6 : 4 }]
    : await lookup(hostname).catch((cause: unknown) => {
        throw new UeError('UE_REMOTE_FAILED', { detail: 'lookup', cause })
      })
  const first = addresses[0]
  if (!first) throw new UeError('UE_REMOTE_FAILED', { detail: 'no address' })
  for (const { address } of addresses) {
    const allowed = policy.allows(address, hostname, port)
    onConnect?.({ host: hostname, address, allowed })
    if (!allowed) throw new UeError('UE_REMOTE_FORBIDDEN', { detail: 'address policy' })
  }
  return dial({ address: first.address, port, protocol, hostname })
}

/** The real dialer: undici's own connector (TLS sessions, SNI), given a literal address. */
function undiciDialer(o: { connectTimeoutMs: number }): Dialer {
  let made: ReturnType<typeof buildConnector> | undefined
  return async (target) => {
    made ??= (await undici()).buildConnector({ timeout: o.connectTimeoutMs })
    const connector = made
    return new Promise((resolve, reject) => {
      const servername =
        target.protocol === 'https:' && !isIpLiteral(target.hostname) ? target.hostname : undefined
      connector(
        {
          hostname: target.address,
          host: target.hostname,
          protocol: target.protocol,
          port: String(target.port),
          ...(servername ? { servername } : {}),
        },
        (err, socket) => (err ? reject(err) : resolve(socket as Socket)),
      )
    })
  }
}
