/**
 * What the host framework knows about a request: handed to the `authorize` hook as its second
 * argument, so the host app's own session (Express `req.user`, Koa `ctx.state.user`) decides.
 */
export interface HostContext {
  /** `express`, `koa`, `fastify`, `node`, or what an embedder names it. */
  framework: string
  /** The framework's own request object (Express `req`, Koa `ctx`, Fastify `request`, node `req`). */
  request: unknown
  /** The signed-in user the framework's auth put on the request, if any. */
  user?: unknown
}

/**
 * What an adapter hands the core beside the fetch `Request`, which cannot carry it: the second
 * argument of every handler of `createUeditorServer`.
 */
export interface ConnectionInfo {
  /**
   * The peer address of the connection. A forwarded header is used instead only when this
   * address is one of `http.trustProxy`.
   */
  remoteAddress?: string | undefined
  host?: HostContext | undefined
}

/** What the core keeps about a request: the client address after the proxy rules. */
export interface ResolvedInfo {
  /** The client address the limits count against (the peer, or a trusted proxy's client). */
  remoteAddress?: string | undefined
  host?: HostContext | undefined
}

const infos = new WeakMap<Request, ResolvedInfo>()

export function setRequestInfo(request: Request, info: ResolvedInfo): void {
  infos.set(request, info)
}

/** Undefined when the caller passed no `ConnectionInfo` (embedded fetch use without an adapter). */
export function requestInfo(request: Request): ResolvedInfo | undefined {
  return infos.get(request)
}
