import type { ServerConfig } from '../config/load.js'
import { keyRecogniser, toStorageKey } from '../ingest/keys.js'
import type { StorageKey } from '../shared/types.js'

export interface FileUrls {
  /**
   * The storage key a URL in an article refers to, else null. Generous on purpose: what this
   * answers keeps a stored file from becoming an orphan, and only keys in the index count, so
   * an extra key costs nothing while a missed one loses a file an article shows.
   */
  keyOf(url: string): StorageKey | null
  /**
   * Whether a browser showing the article, on any page, asks this server for one of its stored
   * files at this URL: a path on the page's own host or on one of the server's hosts, under a
   * stored-file base, naming a valid key. Strict, for what may load only the server's own files.
   */
  isOwnFile(url: string): boolean
  /** The key of the stored file a URL `isOwnFile` names, else null. */
  ownFileKey(url: string): StorageKey | null
  /** Whether a URL is a remote (http or https) address on none of this server's hosts. */
  isRemote(url: string): boolean
  /** The URL the server hands out for a key (`publicUrl` + key). */
  urlOf(key: StorageKey): string
}

/**
 * Relative URLs are resolved as a browser would on a page of this placeholder host (`.invalid`
 * names nothing), once on an http page and once on an https one: `http:/x` is relative only on
 * the first, `https:/x` only on the second.
 */
const PAGE_HOST = 'page.invalid'
const PAGES = [`http://${PAGE_HOST}/`, `https://${PAGE_HOST}/`]

/**
 * The stored-file URLs of this server, in every form an article may hold them:
 *
 * - the bases: `routes.files/`, `publicUrl`'s path and each `*UrlPrefix` + `publicUrl`'s path;
 * - `keyOf` finds a key after a base anywhere in the path, whatever the host (a copied block, a
 *   former host, a page-relative `uploads/…` under `/posts/12/`), or as the end of the path
 *   when one of the `*PathFormat` keys renders it (a CDN whose path changed);
 * - `isOwnFile` and `isRemote` go by host: the page's own host (a relative URL) or an entry of
 *   `editor.catcherLocalDomain`, which holds the hosts of `publicUrl` and of the prefixes.
 */
export function fileUrls(config: ServerConfig): FileUrls {
  const publicUrl = withSlash(config.publicUrl)
  const prefixes = Object.entries(config.editor)
    .filter(([key, value]) => key.endsWith('UrlPrefix') && typeof value === 'string' && value)
    .map(([, value]) => value as string)
  const written = [
    `${config.routes.files}/`,
    publicUrl,
    ...prefixes.map((prefix) => withSlash(`${prefix}${config.publicUrl}`)),
  ]
  const bases = uniqueBases(
    written.flatMap((base) => {
      const url = resolve(base, PAGES[0] as string)
      return url === null ? [] : [segmentsOf(url.pathname)]
    }),
  )
  const formats = Object.entries(config.editor)
    .filter(([key, value]) => key.endsWith('PathFormat') && typeof value === 'string')
    .map(([, value]) => value as string)
  const recognised = keyRecogniser(formats)
  const ownHosts = new Set(config.editor.catcherLocalDomain.map((entry) => entry.toLowerCase()))
  const isOwnHost = (url: URL) =>
    ownHosts.has(url.host) ||
    ownHosts.has(url.hostname) ||
    ownHosts.has(url.hostname.replace(/^\[(.*)\]$/, '$1'))
  const onPageOrOwnHost = (url: URL) => url.hostname === PAGE_HOST || isOwnHost(url)
  // What may load only this server's files is stricter: a host listed without a port counts
  // without one or on this server's own port, never on another port of that machine.
  const ownPort = config.http.port > 0 ? String(config.http.port) : null
  const servedFrom = (url: URL) =>
    url.hostname === PAGE_HOST ||
    ownHosts.has(url.host) ||
    ((url.port === '' || url.port === ownPort) && isOwnHost(url))
  function ownFileKey(url: string): StorageKey | null {
    const all = resolutions(url)
    if (all.length !== PAGES.length) return null
    let key: StorageKey | null = null
    for (const resolved of all) {
      if (resolved.username !== '' || resolved.password !== '' || !servedFrom(resolved)) return null
      const found = keyUnderBase(segmentsOf(resolved.pathname), bases)
      if (found === null || (key !== null && found !== key)) return null
      key = found
    }
    return key
  }
  return {
    keyOf(url) {
      for (const resolved of resolutions(url)) {
        const key = keyInPath(segmentsOf(resolved.pathname), bases, recognised)
        if (key !== null) return key
      }
      return null
    },
    isOwnFile: (url) => ownFileKey(url) !== null,
    ownFileKey,
    isRemote(url) {
      const all = resolutions(url)
      return all.length === PAGES.length && all.every((resolved) => !onPageOrOwnHost(resolved))
    },
    urlOf: (key) => `${publicUrl}${key}`,
  }
}

function withSlash(base: string): string {
  return base.endsWith('/') ? base : `${base}/`
}

/** A URL as a browser resolves it on `page` (WHATWG rules: `\` is `/`, tabs go, …), or null. */
function resolve(value: string, page: string): URL | null {
  try {
    return new URL(value, page)
  } catch {
    return null
  }
}

/** The http(s) URLs a browser may make of `value` on an http and on an https page. */
function resolutions(value: string): URL[] {
  return PAGES.flatMap((page) => {
    const url = resolve(value, page)
    return url !== null && (url.protocol === 'http:' || url.protocol === 'https:') ? [url] : []
  })
}

/** A segment that failed to decode: it can be part of no key. */
const UNDECODABLE = '\u0000'

/**
 * The segments of a path, percent-decoded (an encoded `/` separates too), without empty ones.
 * The query and the fragment are not part of it (cache busters).
 */
function segmentsOf(pathname: string): string[] {
  return pathname
    .split('/')
    .flatMap((raw) => {
      try {
        return decodeURIComponent(raw).split('/')
      } catch {
        return [UNDECODABLE]
      }
    })
    .filter((segment) => segment !== '')
}

function uniqueBases(bases: string[][]): string[][] {
  const seen = new Set<string>()
  return bases.filter((base) => {
    const id = base.join('/')
    if (seen.has(id)) return false
    seen.add(id)
    return true
  })
}

/** Keys have at most 8 segments (`toStorageKey`). */
const MAX_KEY_SEGMENTS = 8

/**
 * Where a key may start in `segments`: right after a whole base, anywhere in the path (a base
 * at the root, `/`, only at the start). In path order, so the first is the longest key.
 */
function keysAfterBases(segments: readonly string[], bases: readonly string[][]): StorageKey[] {
  const keys: StorageKey[] = []
  // A key is at most MAX_KEY_SEGMENTS long, so only the last few starts can name one: the work
  // stays linear in the path however many segments an address is given.
  for (
    let start = Math.max(0, segments.length - MAX_KEY_SEGMENTS);
    start < segments.length;
    start++
  ) {
    const after = bases.some((base) =>
      base.length === 0
        ? start === 0
        : start >= base.length && base.every((s, i) => segments[start - base.length + i] === s),
    )
    if (!after) continue
    const key = toStorageKey(segments.slice(start).join('/'))
    if (key !== null) keys.push(key)
  }
  return keys
}

/**
 * The key a path names: after a base (one a path format renders first, for a page path that
 * happens to hold a base too), else the end of the path when a path format renders it.
 */
function keyInPath(
  segments: readonly string[],
  bases: readonly string[][],
  recognised: (key: string) => StorageKey | null,
): StorageKey | null {
  const afterBases = keysAfterBases(segments, bases)
  const rendered = afterBases.find((key) => recognised(key) !== null)
  if (rendered !== undefined) return rendered
  if (afterBases[0] !== undefined) return afterBases[0]
  for (
    let start = Math.max(0, segments.length - MAX_KEY_SEGMENTS);
    start < segments.length;
    start++
  ) {
    const key = recognised(segments.slice(start).join('/'))
    if (key !== null) return key
  }
  return null
}

/** The key of a path that is a base from the root followed by a valid key, else null. */
function keyUnderBase(segments: readonly string[], bases: readonly string[][]): StorageKey | null {
  for (const base of bases) {
    if (base.length >= segments.length || !base.every((s, i) => segments[i] === s)) continue
    const key = toStorageKey(segments.slice(base.length).join('/'))
    if (key !== null) return key
  }
  return null
}
