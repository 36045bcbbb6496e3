import type { ServerConfig } from '../config/load.js'
import { toStorageKey } from '../ingest/keys.js'
import type { StorageKey } from '../shared/types.js'

/** Where this server's stored files live: a path prefix, on some hosts or on any relative URL. */
interface FileBase {
  /** `host[:port]` the base is on; empty for a path base, which also matches relative URLs. */
  hosts: ReadonlySet<string>
  /** The path the key follows, ending in `/`. */
  path: string
}

export interface FileUrls {
  /** The storage key of a URL of one of this server's stored files, else null. */
  keyOf(url: string): StorageKey | null
  /** Whether a URL is a remote (http or https) address that is none of this server's. */
  isRemote(url: string): boolean
  /** The URL the server hands out for a key (`publicUrl` + key). */
  urlOf(key: StorageKey): string
}

/**
 * Every form of stored-file URL the server hands out: `publicUrl` + key (relative, or absolute
 * on a CDN), each `*UrlPrefix` in front of it (what the editor puts in the article), and
 * `routes.files/` + key, on any of the server's own hosts (`editor.catcherLocalDomain`, which
 * holds the hosts of `publicUrl` and the prefixes) or relative to the page.
 */
export function fileUrls(config: ServerConfig): FileUrls {
  const ownHosts = new Set(
    config.editor.catcherLocalDomain.flatMap((entry) => {
      const host = hostOf(`http://${entry}`)
      return host === null ? [] : [host]
    }),
  )
  const publicUrl = withSlash(config.publicUrl)
  const prefixes = Object.entries(config.editor)
    .filter(([key, value]) => key.endsWith('UrlPrefix') && typeof value === 'string' && value)
    .map(([, value]) => value as string)
  const written = [
    publicUrl,
    `${config.routes.files}/`,
    ...prefixes.map((prefix) => withSlash(`${prefix}${config.publicUrl}`)),
  ]
  const bases = uniqueBases(written.flatMap((base) => baseOf(base, ownHosts)))
  return {
    keyOf: (url) => keyOf(url, bases),
    isRemote: (url) => /^(?:https?:)?\/\//i.test(url.trim()) && keyOrOwn(url, bases) === null,
    urlOf: (key) => `${publicUrl}${key}`,
  }
}

function withSlash(base: string): string {
  return base.endsWith('/') ? base : `${base}/`
}

function baseOf(written: string, ownHosts: ReadonlySet<string>): FileBase[] {
  const absolute = /^(?:https?:)?\/\//i.test(written)
  if (!absolute) {
    if (!written.startsWith('/')) return []
    return [
      { hosts: new Set(), path: written },
      { hosts: ownHosts, path: written },
    ]
  }
  const url = parseAbsolute(written)
  return url === null ? [] : [{ hosts: new Set([url.host]), path: withSlash(url.pathname) }]
}

function uniqueBases(bases: FileBase[]): FileBase[] {
  const seen = new Set<string>()
  return bases.filter((b) => {
    const id = `${[...b.hosts].sort().join(',')}\n${b.path}`
    if (seen.has(id)) return false
    seen.add(id)
    return true
  })
}

/** `http://…`, `https://…` or `//…` (taken as https) as a URL; null for anything else. */
function parseAbsolute(value: string): URL | null {
  const text = value.trim()
  if (!/^(?:https?:)?\/\//i.test(text)) return null
  try {
    return new URL(text.startsWith('//') ? `https:${text}` : text)
  } catch {
    return null
  }
}

function hostOf(value: string): string | null {
  return parseAbsolute(value)?.host ?? null
}

/**
 * The key, or '' for an address on one of the bases that names no valid key; null when the
 * address is on none of them. The query and fragment are ignored (cache busters).
 */
function keyOrOwn(value: string, bases: readonly FileBase[]): StorageKey | '' | null {
  const absolute = parseAbsolute(value)
  let path: string
  let host: string | null = null
  if (absolute !== null) {
    if (absolute.username !== '' || absolute.password !== '') return null
    path = absolute.pathname
    host = absolute.host
  } else {
    const text = value.trim()
    if (!text.startsWith('/')) return null
    try {
      path = new URL(text, 'http://relative.invalid').pathname
    } catch {
      return null
    }
  }
  for (const base of bases) {
    const onHost = host === null ? base.hosts.size === 0 : base.hosts.has(host)
    if (!onHost || !path.startsWith(base.path)) continue
    let rest: string
    try {
      rest = decodeURIComponent(path.slice(base.path.length))
    } catch {
      return ''
    }
    return toStorageKey(rest) ?? ''
  }
  return null
}

function keyOf(value: string, bases: readonly FileBase[]): StorageKey | null {
  const key = keyOrOwn(value, bases)
  return key === null || key === '' ? null : key
}
