import { storedFields } from '../../admission/results.js'
import { storeTempFile } from '../../admission/store.js'
import type { ServerConfig } from '../../config/load.js'
import { formValues, readUrlEncodedForm } from '../../ingest/form.js'
import { bareHostname, parseRemoteUrl } from '../../ingest/remote/guard.js'
import { sniffAllowedExtension } from '../../ingest/sniff.js'
import { createSpool, type Spool } from '../../ingest/temp-file.js'
import { deadline } from '../../shared/deadline.js'
import { isUeError, refusalLevel, UeError, type UeErrorCode } from '../../shared/errors.js'
import { messageFor } from '../../shared/messages.js'
import type { CatchRule } from '../action-table.js'
import type { ActionContext } from '../deps.js'

export interface CatchEntry {
  state: string
  url?: string
  title?: string
  original?: string
  size?: number
  /** The requested URL, verbatim: the original UEditor matches results by it. */
  source: string
  code?: UeErrorCode
}

export interface CatchResult {
  state: 'SUCCESS'
  list: CatchEntry[]
}

/** Raster types a capture may be stored as, in order of preference. */
const RASTER_TYPES: ReadonlyArray<readonly [ext: string, mime: string]> = [
  ['.png', 'image/png'],
  ['.jpg', 'image/jpeg'],
  ['.jpeg', 'image/jpeg'],
  ['.gif', 'image/gif'],
  ['.webp', 'image/webp'],
  ['.avif', 'image/avif'],
  ['.bmp', 'image/bmp'],
]

const MAX_FORM_BYTES = 1024 * 1024

/**
 * catch: fetch each source through the guarded fetcher, keep it only if its bytes are an
 * allowed raster image, store it like an upload. Never fails as a whole: one entry per source,
 * in request order, each with its own state. Sources past `catcher.maxSources` are not fetched.
 */
export async function handleCatch(ctx: ActionContext, rule: CatchRule): Promise<CatchResult> {
  const { config } = ctx.deps
  const sources = await readSources(ctx, rule)
  const { maxSources, concurrency, requestTimeoutMs } = config.catcher
  const limit = deadline(
    requestTimeoutMs,
    () => new UeError('UE_REMOTE_FAILED', { detail: 'request deadline' }),
    ctx.request.signal,
  )
  const spool = createSpool(config.uploads.tempDir, ctx.deps.metrics)
  try {
    const fetched = await mapBounded(sources.slice(0, maxSources), concurrency, (source) =>
      catchOne(ctx, rule, spool, source, limit.signal),
    )
    const refused = sources
      .slice(maxSources)
      .map((source) => failedEntry(config, source, new UeError('UE_REMOTE_TOO_MANY')))
    return { state: 'SUCCESS', list: [...fetched, ...refused] }
  } finally {
    limit.dispose()
    await spool.dispose()
  }
}

/**
 * The answer to a JSONP catch while JSONP catch is off (the default, since a GET capture can
 * be triggered cross-site). It is still a JSONP answer with one failed entry per source:
 * anything else makes the editor request the same image again forever. Nothing is fetched.
 */
export function refuseCatchOverJsonp(url: URL, rule: CatchRule, config: ServerConfig): CatchResult {
  const error = new UeError('UE_REMOTE_JSONP_DISABLED')
  return {
    state: 'SUCCESS',
    list: sourcesFrom(url.searchParams, rule).map((source) => failedEntry(config, source, error)),
  }
}

async function readSources(ctx: ActionContext, rule: CatchRule): Promise<string[]> {
  if (ctx.request.method === 'GET') return sourcesFrom(ctx.url.searchParams, rule)
  const form = await readUrlEncodedForm(ctx.request, {
    maxBytes: MAX_FORM_BYTES,
    timeouts: ctx.deps.config.http,
  })
  return sourcesFrom(form, rule)
}

function sourcesFrom(params: URLSearchParams, rule: CatchRule): string[] {
  return rule.fieldNames.flatMap((name) => formValues(params, name))
}

async function catchOne(
  ctx: ActionContext,
  rule: CatchRule,
  spool: Spool,
  source: string,
  signal: AbortSignal,
): Promise<CatchEntry> {
  const { config, remote, log } = ctx.deps
  let host: string | undefined
  // Every address the guard checked, redirect hops included, as `host=address` or
  // `host=address!` when refused.
  const resolved: string[] = []
  const audit = (verdict: string, key?: string) =>
    log.info(
      {
        audit: 'catch',
        user: ctx.actor.user,
        address: ctx.actor.address,
        host,
        resolved,
        verdict,
        key,
      },
      'catch decision',
    )
  try {
    if (signal.aborted) throw new UeError('UE_REMOTE_FAILED', { detail: 'request deadline' })
    const url = parseRemoteUrl(source)
    host = url.host
    if (!remote.isAllowListed(url) && isLocalDomain(url, rule.localDomains))
      throw new UeError('UE_REMOTE_LOCAL_DOMAIN')
    const file = await remote.fetchImage(url, {
      spool,
      maxBytes: rule.maxSize,
      accept: acceptHeader(rule.allowFiles),
      signal,
      onConnect: (c) => resolved.push(`${c.host}=${c.address}${c.allowed ? '' : '!'}`),
    })
    try {
      const ext = await sniffRasterExtension(file.head, rule.allowFiles)
      const entry = await storeTempFile(ctx.deps, file, rule, ext, ctx.actor)
      audit('stored', entry.key)
      return { state: 'SUCCESS', ...storedFields(config.publicUrl, entry), source }
    } finally {
      await file.dispose()
    }
  } catch (e) {
    audit(isUeError(e) ? e.code : 'UE_INTERNAL')
    if (!isUeError(e)) {
      log.error({ err: e }, 'unexpected error while capturing a remote image')
      return failedEntry(config, source, new UeError('UE_INTERNAL'))
    }
    const level = refusalLevel(e)
    if (level === 'error' && e.code !== 'UE_REMOTE_FAILED')
      log.error({ err: e, cause: e.cause, ...e.context }, 'capturing a remote image failed')
    else if (level === 'warn') log.warn({ code: e.code, ...e.context }, 'remote image not captured')
    else log.debug({ code: e.code, detail: e.detail, source }, 'remote image not captured')
    return failedEntry(config, source, e)
  }
}

/** Blocked and unreachable look the same, so the action cannot map an internal network. */
const ANSWERED_AS: Partial<Record<UeErrorCode, UeErrorCode>> = {
  UE_REMOTE_FORBIDDEN: 'UE_REMOTE_FAILED',
  UE_CONTENT_MISMATCH: 'UE_REMOTE_NOT_IMAGE',
  UE_TYPE_NOT_ALLOWED: 'UE_REMOTE_NOT_IMAGE',
}

function failedEntry(config: ServerConfig, source: string, error: UeError): CatchEntry {
  const code = ANSWERED_AS[error.code] ?? error.code
  return { state: messageFor(config.locale, code), code, source }
}

/** `catcherLocalDomain` entries are exact host names (or host:port). */
function isLocalDomain(url: URL, localDomains: readonly string[]): boolean {
  const hostname = bareHostname(url.hostname)
  return localDomains.some((d) => {
    const domain = d.toLowerCase()
    return domain === url.host || domain === url.hostname || domain === hostname
  })
}

/** The stored extension comes from the bytes, never from the URL. */
async function sniffRasterExtension(
  head: Uint8Array,
  allowFiles: readonly string[],
): Promise<string> {
  const rasters = RASTER_TYPES.map(([ext]) => ext).filter((ext) => allowFiles.includes(ext))
  const ext = await sniffAllowedExtension(head, rasters)
  if (!ext) throw new UeError('UE_REMOTE_NOT_IMAGE')
  return ext
}

function acceptHeader(allowFiles: readonly string[]): string {
  const mimes = RASTER_TYPES.filter(([ext]) => allowFiles.includes(ext)).map(([, mime]) => mime)
  return [...new Set(mimes), '*/*;q=0.1'].join(',')
}

/** Runs `fn` over `items` with at most `limit` at once; results keep the input order. */
async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const i = next++
      results[i] = await fn(items[i] as T)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}
