/** What the HTTP adapter knows about a request that a fetch `Request` cannot carry. */
export interface ConnectionInfo {
  /** The peer address of the connection (no proxy header is trusted). */
  remoteAddress?: string
}

const infos = new WeakMap<Request, ConnectionInfo>()

export function setRequestInfo(request: Request, info: ConnectionInfo): void {
  infos.set(request, info)
}

/** Undefined when the request did not come through `toNodeHandler` (embedded fetch use). */
export function requestInfo(request: Request): ConnectionInfo | undefined {
  return infos.get(request)
}
