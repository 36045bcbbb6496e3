import type { ServerConfig } from './config/load.js'
import { clientAddress, parseTrustedProxies } from './http/client-address.js'
import { withCors } from './http/cors.js'
import { answerFor } from './http/lazy-request.js'
import type { Mounts } from './http/mounts.js'
import { observe } from './http/observe.js'
import { withDrainLimits } from './http/request-body-node.js'
import { catchErrors } from './shared/error-path.js'
import { methodNotAllowed, shuttingDown, UeError } from './shared/errors.js'
import type { MetricsRegistry } from './shared/metrics.js'
import { setRequestInfo } from './shared/request-info.js'
import { urlOf } from './shared/request-url.js'
import type { FetchHandler, Logger } from './shared/types.js'

export type RouteName =
  | 'editor'
  | 'files'
  | 'materials'
  | 'documents'
  | 'direct'
  | 'assets'
  | 'formula'
  | 'metrics'
  | 'health'
  | 'tus'
  | 'other'

/**
 * One part of the server: `fetch`'s routing, the paths of `mounts`, the metrics label, CORS, the
 * method check and the shutdown refusal all follow from its entry in the route list.
 */
export interface Route {
  /** Its label in metrics and access lines, and its handler's name on the server. */
  readonly name: RouteName
  /**
   * The paths it answers: exact ones, and a prefix (ending in `/`) it answers every path under.
   * Exact paths win over prefixes, then prefixes go in list order; a route with neither answers
   * every path no other route does (the static site, else 404).
   */
  readonly match: { readonly exact?: readonly string[]; readonly prefix?: string }
  readonly handler: FetchHandler
  /** The methods it answers: any other is refused with 405 and `Allow` before the handler. */
  readonly methods: readonly string[]
  /**
   * The handler refuses other methods itself, in its own shape: the editor per action, the
   * materials API per path, stored files with their safety headers.
   */
  readonly checksMethods?: boolean
  /** Browsers on `http.corsOrigins` may call it; preflights are answered with `methods`. */
  readonly cors?: boolean
  /**
   * More CORS for a protocol of its own (tus): request headers a browser may send, response
   * headers it may read, and whether an `OPTIONS` that is not a preflight reaches the handler.
   */
  readonly corsProtocol?: {
    readonly allowHeaders: readonly string[]
    readonly exposeHeaders: readonly string[]
    readonly discovery: boolean
  }
  /**
   * While the server stops accepting, a request is refused with `UE_SHUTTING_DOWN` before the
   * handler, unless the handler does it in its own shape (`handler`: the editor, the probes).
   */
  readonly whileStopping?: 'handler'
}

export interface RouteContext {
  log: Logger
  metrics: MetricsRegistry
  corsOrigins: readonly string[]
  /** More request headers CORS allows (the configured auth header). */
  corsHeaders: readonly string[]
  stopping(): boolean
}

/** Routes whose access lines are logged at debug level (health checks, scrapes). */
const QUIET: ReadonlySet<string> = new Set(['health', 'metrics'])

/**
 * `route.handler` with what every route gets, outside in: the request id, access line and
 * metrics (`observe`), the error path, the shutdown refusal, CORS and the method check.
 */
export function serveRoute(route: Route, c: RouteContext): FetchHandler {
  let handler = route.handler
  if (!route.checksMethods) handler = onlyMethods(handler, route.methods)
  if (route.cors)
    handler = withCors(
      handler,
      c.corsOrigins,
      [...new Set([...route.methods, 'OPTIONS'])].join(', '),
      [...c.corsHeaders, ...(route.corsProtocol?.allowHeaders ?? [])],
      {
        expose: route.corsProtocol?.exposeHeaders ?? [],
        discovery: route.corsProtocol?.discovery ?? false,
      },
    )
  if (route.whileStopping !== 'handler') handler = refusedWhileStopping(handler, c.stopping)
  const guarded = catchErrors(handler, { area: route.name, log: c.log })
  return observe(guarded, {
    log: c.log,
    metrics: c.metrics,
    routeOf: () => route.name,
    quietRoutes: QUIET,
  })
}

export interface RouteTable {
  /** Every route by path. */
  readonly fetch: FetchHandler
  /** The paths `fetch` answers besides the catch-all route. */
  readonly mounts: Mounts
  /** Each route's own handler, as `fetch` serves it. */
  readonly served: ReadonlyMap<RouteName, FetchHandler>
}

/** The route list as one handler: one lookup of the path finds the route. */
export function routeTable(routes: readonly Route[], c: RouteContext): RouteTable {
  const served = new Map<RouteName, FetchHandler>()
  const exact = new Map<string, FetchHandler>()
  const prefixes: [string, FetchHandler][] = []
  let other: FetchHandler = async () => {
    throw new UeError('UE_NOT_FOUND')
  }
  for (const route of routes) {
    const handler = serveRoute(route, c)
    served.set(route.name, handler)
    const { exact: paths = [], prefix } = route.match
    for (const path of paths) if (!exact.has(path)) exact.set(path, handler)
    if (prefix !== undefined) prefixes.push([prefix, handler])
    if (paths.length === 0 && prefix === undefined) other = handler
  }
  const fetch: FetchHandler = (request) => {
    const { pathname } = urlOf(request)
    const handler =
      exact.get(pathname) ?? prefixes.find(([prefix]) => pathname.startsWith(prefix))?.[1] ?? other
    return handler(request)
  }
  const mounts = { exact: [...exact.keys()], prefixes: prefixes.map(([prefix]) => prefix) }
  return { fetch, mounts, served }
}

/**
 * What an adapter hands over beside the request (the peer address, the host framework's
 * request) becomes the request's info, once, at the door; the node bridge reads the drain limits.
 */
export function door(http: ServerConfig['http']): (handler: FetchHandler) => FetchHandler {
  const proxies = parseTrustedProxies(http.trustProxy)
  const drainLimits = {
    maxBytes: http.drainMaxBytes,
    timeoutMs: http.drainTimeoutMs,
    idleMs: http.bodyIdleTimeoutMs,
  }
  return (handler) =>
    withDrainLimits((request, info) => {
      if (info)
        setRequestInfo(request, {
          remoteAddress: clientAddress(
            info.remoteAddress,
            request.headers.get('x-forwarded-for'),
            proxies,
          ),
          host: info.host,
        })
      return answerFor(request, handler(request))
    }, drainLimits)
}

// These two hand the handler's own promise on (no async wrapper: one promise and its ticks
// fewer per request); a refusal is still a rejection, never a throw.
function onlyMethods(handler: FetchHandler, methods: readonly string[]): FetchHandler {
  return (request) =>
    methods.includes(request.method) ? handler(request) : Promise.reject(methodNotAllowed(methods))
}

function refusedWhileStopping(handler: FetchHandler, stopping: () => boolean): FetchHandler {
  return (request) => (stopping() ? Promise.reject(shuttingDown()) : handler(request))
}
