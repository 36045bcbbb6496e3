import type { ParsedServerConfig } from './schema.js'

type Editor = ParsedServerConfig['editor']

/**
 * The editor leaves a pasted image alone when its URL contains the page's host or any
 * `catcherLocalDomain` entry (a substring test); every other `http(s)` image is sent to
 * `catch`. So the list always holds the hosts this server's own URLs use: the stored-file base
 * (`publicUrl`, or `routes.files` when that is a `//host/…` URL) and every absolute `*UrlPrefix`
 * (a CDN in front of the results). Without them a cross-origin editor sends the user's own
 * uploads to `catch` on the next paste and replaces them with its broken-image picture.
 */
export function withOwnHosts(editor: Editor, publicUrl: string): Editor {
  const own = [publicUrl, ...urlPrefixes(editor)].flatMap(urlHosts)
  const list = [...new Set([...editor.catcherLocalDomain, ...own])]
  return list.length === editor.catcherLocalDomain.length
    ? editor
    : { ...editor, catcherLocalDomain: list }
}

function urlPrefixes(editor: Editor): string[] {
  return Object.entries(editor)
    .filter(([key, value]) => key.endsWith('UrlPrefix') && typeof value === 'string')
    .map(([, value]) => value as string)
}

/**
 * `host[:port]` of an absolute or protocol-relative URL, twice when they differ: as written
 * (what the editor's `_src` holds, since results are the base plus the key verbatim) and as
 * the browser normalises it (lower case, no default port) for an image pasted from elsewhere.
 */
function urlHosts(url: string): string[] {
  const written = /^(?:https?:)?\/\/([^/?#\s]+)/i.exec(url.trim())?.[1]
  if (!written) return []
  const authority = written.slice(written.lastIndexOf('@') + 1)
  let normal: string
  try {
    normal = new URL(`https://${authority}/`).host
  } catch {
    return []
  }
  return authority && normal ? [...new Set([authority, normal])] : []
}

/**
 * The list the browser gets. An entry that a URL on a host allowed in `catcher.allowHosts`
 * would contain is dropped, or the editor would never send that host's images to `catch`: with
 * `127.0.0.1:27410` allowed, `127.0.0.1` matches `http://127.0.0.1:27410/x.png`. A bare host
 * dropped that way is narrowed to what still cannot reach the allowed host: its URLs without a
 * port (`127.0.0.1/`) and on this server's own port (`127.0.0.1:8080`).
 */
export function browserLocalDomains(
  domains: readonly string[],
  allowHosts: readonly string[],
  ownPort: number,
): string[] {
  const out: string[] = []
  for (const entry of domains) {
    if (!allowHosts.some((host) => reaches(entry, host))) {
      out.push(entry)
      continue
    }
    if (!/^[^/:]+$|^\[[^\]/]+\]$/.test(entry)) continue
    const narrowed = [`${entry}/`, ...(ownPort > 0 ? [`${entry}:${ownPort}`] : [])]
    out.push(...narrowed.filter((n) => !allowHosts.some((host) => reaches(n, host))))
  }
  return [...new Set(out)]
}

/** Whether a URL on the allowed `host` (or `host:port`) can contain `entry`. */
function reaches(entry: string, allowed: string): boolean {
  const hasPort = /(^[^[\]]+|\]):\d+$/.test(allowed)
  const ports = hasPort ? [] : [...entry.matchAll(/:(\d{1,5})/g)].map((m) => m[1] as string)
  const hosts = [allowed, ...ports.map((p) => `${allowed}:${p}`)]
  return hosts.some((h) => `http://${h}/`.includes(entry) || `https://${h}/`.includes(entry))
}
