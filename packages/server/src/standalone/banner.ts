import { isIP } from 'node:net'
import type { ResolvedMode } from '../auth/mode.js'
import { AUTH_SETTINGS_HINT } from '../auth/unconfigured.js'
import type { ServerConfig } from '../config/load.js'
import { resolveSqliteEngine } from '../db/open.js'
import { wordConverter, wordSummary } from '../shared/word-converter.js'
import { wordSupport, wordSupportLine } from '../word/support.js'
import type { RunningServer } from './serve.js'

/** True unless the address only accepts connections from this machine. */
export function isPublicBind(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase()
  if (h === 'localhost' || h === '::1' || h.startsWith('::ffff:127.')) return false
  return !(isIP(h) === 4 && h.startsWith('127.'))
}

/**
 * The start message: where the page, the endpoint, health and the data live. A wildcard bind
 * (0.0.0.0, ::) is shown as a loopback URL, since a browser cannot open 0.0.0.0, and any bind
 * beyond loopback gets a warning.
 */
export function bannerText(server: RunningServer, version: string): string {
  const { config } = server.ue
  const { routes } = config
  const port = new URL(server.url).port
  const host = config.http.host.replace(/^\[|\]$/g, '')
  const wildcard = host === '0.0.0.0' || host === '::'
  const base = wildcard ? `http://${host === '::' ? '[::1]' : '127.0.0.1'}:${port}` : server.url
  const index =
    config.index.driver === 'sqlite'
      ? `SQLite ${config.index.file} through ${resolveSqliteEngine(config.index.engine)}`
      : 'PostgreSQL'
  const files =
    config.storage.driver === 'local' ? config.storage.root : `S3 bucket ${config.storage.bucket}`
  const row = (label: string, value: string) => `  ${`${label}:`.padEnd(29)}${value}\n`
  let out = `ueditor-server ${version} listening on ${base}\n`
  if (config.site.dir) out += row('page', `${base}/ (from ${config.site.dir})`)
  out += row('editor endpoint (serverUrl)', `${base}${routes.editor}`)
  out += row('stored files', `${base}${routes.files}/`)
  if (config.materials.enabled)
    out += row('materials (designer)', `${base}${routes.materials}/categories`)
  if (config.tus.enabled) out += row('resumable uploads (tus)', `${base}${routes.tus}`)
  if (config.direct.enabled && config.storage.driver === 's3')
    out += row('direct uploads (Uppy)', `${base}${routes.s3}`)
  if (config.documents.enabled) out += row('documents API', `${base}${routes.documents}/`)
  out += row('health', `${base}/healthz`)
  out += row('ready', `${base}/readyz`)
  out += row('data folder', config.dataDir)
  out += row('index', index)
  out += row('uploads', files)
  out += row('auth', authSummary(config, server.ue.auth))
  const word = wordSummary(wordConverter(config.images))
  out += row('word', word.fix ? `${word.message}; install: ${word.fix}` : word.message)
  out += row('word import', wordSupportLine(wordSupport(config)))
  if (isPublicBind(config.http.host)) {
    const reach = wildcard
      ? `every address of this machine (${config.http.host})`
      : `${config.http.host}, which is not loopback`
    out +=
      `warning: listening on ${reach}: anyone who can reach it can upload files.\n` +
      '  Bind HOST=127.0.0.1 behind a reverse proxy (docs/deploy.md), or firewall the port.\n'
  }
  return out
}

/** What a server without any auth setting does. */
export const UNCONFIGURED = 'not configured: uploads, listings and captures are refused'

/**
 * Who may use the server, in one line: the mode and what it checks, that anyone may (mode none
 * chosen), or that nobody may yet (no auth setting at all) and what to set.
 */
export function authSummary(config: ServerConfig, mode: ResolvedMode): string {
  const { auth } = config
  const also = auth.queryParam
    ? `; tokens also read from the query parameter ${auth.queryParam}`
    : ''
  switch (mode.mode) {
    case 'none':
      return mode.explicit
        ? 'none (UEDITOR_AUTH=none): anyone who can reach this port may upload, list and capture files'
        : `${UNCONFIGURED} until you ${AUTH_SETTINGS_HINT}`
    case 'tokens': {
      const users = new Set(auth.tokens.map((t) => t.slice(0, t.indexOf(':')))).size
      return `static tokens (${users} user${users === 1 ? '' : 's'})${also}`
    }
    case 'jwt': {
      const keys = auth.jwt.secret ? 'HS256 secret' : `keys from ${auth.jwt.jwksUrl}`
      return `JWT (${keys}, audience ${auth.jwt.audience})${also}`
    }
    case 'hook':
      return `the host app's authorize function${also}`
  }
}
