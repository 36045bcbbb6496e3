/**
 * A request's URL, parsed once for everyone who routes on it (the access line, the router, the
 * editor's action): `request.url` is a string, and each `new URL` costs a full parse. Read it,
 * never change it: the same object goes to every caller.
 */
const parsed = new WeakMap<Request, URL>()

/** Hands `urlOf` a URL the caller has just parsed for `request` (the Node edge parses one anyway). */
export function rememberUrl(request: Request, url: URL): void {
  parsed.set(request, url)
}

export function urlOf(request: Request): URL {
  let url = parsed.get(request)
  if (!url) {
    url = new URL(request.url)
    parsed.set(request, url)
  }
  return url
}

/**
 * The path as logged: the value of a `<name>=<value>` segment is left out, since the direct
 * upload routes take a query token there (docs/uploads.md), and a token is never written down.
 */
export function loggedPath(pathname: string): string {
  return pathname.includes('=') ? pathname.replace(/\/([^/=]+)=[^/]*/g, '/$1=…') : pathname
}
