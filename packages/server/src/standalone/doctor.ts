import { randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { access, mkdtemp, readdir, rm, stat, statfs } from 'node:fs/promises'
import { connect, createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { Readable } from 'node:stream'
import { bindVerdict, resolveAuthMode } from '../auth/mode.js'
import { AUTH_SETTINGS_HINT, isUnconfigured } from '../auth/unconfigured.js'
import { crossOriginProblem } from '../config/cross-origin.js'
import { directUploadsServed } from '../config/direct-url.js'
import { unknownEditorKeys } from '../config/editor-keys.js'
import { loadConfig, type ServerConfig, unknownVariables } from '../config/load.js'
import { newerIndex } from '../db/migrations.js'
import { openMetadataStore, resolveSqliteEngine } from '../db/open.js'
import { isTrustedProxy, parseTrustedProxies } from '../http/client-address.js'
import { isUeError } from '../shared/errors.js'
import { missingPackages } from '../shared/optional-deps.js'
import type { StorageKey } from '../shared/types.js'
import { wordConverter, wordSummary } from '../shared/word-converter.js'
import { s3Options, storageDriver } from '../start-up.js'
import { s3DirectBucket } from '../storage/s3-direct.js'
import { wordSupport, wordSupportFix, wordSupportLine } from '../word/support.js'
import { authSummary, isPublicBind, UNCONFIGURED } from './banner.js'

/** `info`: something doctor cannot check from here; `check` says how to. */
export type Verdict = 'ok' | 'info' | 'warn' | 'fail'

export interface Finding {
  verdict: Verdict
  check: string
  message: string
  /** What to do about it (warn and fail only). */
  fix?: string
  /** How to check by hand what doctor cannot see (info only). */
  verify?: string
}

/**
 * `ueditor-server doctor`: checks what a start needs, without starting (it never creates the
 * data folder or the database; with S3 it writes and deletes one probe object), and says what
 * to fix. Exit code 1 when any check fails.
 */
export async function runDoctor(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const findings = await diagnose(env)
  for (const f of findings) {
    process.stdout.write(`${f.verdict.padEnd(4)}  ${f.check}: ${f.message}\n`)
    if (f.fix) process.stdout.write(`      fix: ${f.fix}\n`)
    if (f.verify) process.stdout.write(`      check: ${f.verify}\n`)
  }
  const failed = findings.filter((f) => f.verdict === 'fail').length
  const warned = findings.filter((f) => f.verdict === 'warn').length
  process.stdout.write(
    failed > 0
      ? `\n${failed} problem${failed === 1 ? '' : 's'} to fix before the server can run.\n`
      : `\nReady to serve${warned > 0 ? ` (${warned} warning${warned === 1 ? '' : 's'})` : ''}.\n`,
  )
  return failed > 0 ? 1 : 0
}

export async function diagnose(env: NodeJS.ProcessEnv): Promise<Finding[]> {
  const findings: Finding[] = []
  let config: ServerConfig
  try {
    config = loadConfig({ env })
  } catch (e) {
    const detail = isUeError(e) ? (e.detail ?? '').replaceAll('\n  - ', '\n      - ') : String(e)
    return [
      {
        verdict: 'fail',
        check: 'config',
        message: `invalid:${detail}`,
        fix: 'correct the values listed (docs/config.md describes every key and variable)',
      },
    ]
  }
  const file = env.UEDITOR_CONFIG
  findings.push({
    verdict: 'ok',
    check: 'config',
    message: `valid (${file ? `${file} and ` : ''}UEDITOR_* variables over the defaults)`,
  })
  for (const unknown of unknownEditorKeys(config.editor, config.editorExtraKeys))
    findings.push({
      verdict: 'warn',
      check: 'config',
      message: unknown.message,
      fix: unknown.suggestion
        ? `rename it to ${unknown.suggestion}`
        : `remove it, or add it to editorExtraKeys`,
    })
  for (const unknown of unknownVariables(env))
    findings.push({
      verdict: 'warn',
      check: 'config',
      message: unknown.message,
      fix: `unset ${unknown.name} if it is not meant for this server`,
    })
  findings.push(checkAuth(config))
  const missing = checkPackages(config, findings)
  const crossOrigin = crossOriginProblem(config)
  if (crossOrigin)
    findings.push({
      verdict: 'warn',
      check: 'cross-origin',
      message: crossOrigin.message,
      fix: crossOrigin.fix,
    })
  findings.push(checkWord(config))
  if (isPublicBind(config.http.host))
    findings.push({
      verdict: 'warn',
      check: 'listen',
      message: `${config.http.host}:${config.http.port} accepts connections from every network`,
      fix: 'bind to 127.0.0.1 behind a reverse proxy (docs/deploy.md), or firewall the port',
    })
  findings.push(await checkPort(config.http.host, config.http.port))
  if (config.http.trustProxy.length > 0) findings.push(checkProxy(config))

  findings.push(await checkFolder('data folder', config.dataDir))
  if (config.storage.driver === 'local' && !config.storage.root.startsWith(`${config.dataDir}/`))
    findings.push(await checkFolder('upload folder', config.storage.root))
  if (!config.uploads.tempDir.startsWith(`${config.dataDir}/`))
    findings.push(await checkFolder('temp folder', config.uploads.tempDir))
  if (config.site.dir) findings.push(await checkSite(config.site.dir, config.dataDir))
  findings.push(await checkFreeSpace(config))
  // A check that would only fail again for a package already named is left out.
  if (!missing.has('pg')) findings.push(await checkDatabase(config))
  if (config.storage.driver === 's3' && !missing.has('@aws-sdk/client-s3')) {
    findings.push(await checkBucket(config))
    const node = checkNodeForSdk()
    if (node) findings.push(node)
  }
  if (config.webhooks.url) findings.push(await checkWebhook(config.webhooks))
  findings.push(checkWordImport(config))
  return findings
}

/**
 * What the Word import action takes here: `.docx` needs mammoth and yauzl (optional npm
 * packages), `.doc` LibreOffice with Writer, cut off from the network. Either missing is a
 * warning: the server runs, and the action refuses what it cannot read.
 */
function checkWordImport(config: ServerConfig): Finding {
  const support = wordSupport(config)
  const fix = wordSupportFix(support)
  const message = wordSupportLine(support)
  return fix
    ? { verdict: 'warn', check: 'word import', message, fix }
    : { verdict: 'ok', check: 'word import', message }
}

/**
 * Who may use the server: the mode, said plainly, and whether the start allows it here. Without
 * any auth setting the server refuses anonymous uploads, which is a warning on loopback.
 */
function checkAuth(config: ServerConfig): Finding {
  const check = 'auth'
  const mode = resolveAuthMode(config.auth, false)
  if (bindVerdict(config.http.host, mode) === 'refuse')
    return {
      verdict: 'fail',
      check,
      message: `${UNCONFIGURED}, and the start refuses ${config.http.host}, which is not loopback`,
      fix: AUTH_SETTINGS_HINT,
    }
  if (isUnconfigured(mode))
    return { verdict: 'warn', check, message: UNCONFIGURED, fix: AUTH_SETTINGS_HINT }
  const message = authSummary(config, mode)
  if (mode.mode === 'none' && isPublicBind(config.http.host))
    return {
      verdict: 'warn',
      check,
      message,
      fix: 'set UEDITOR_AUTH_TOKENS or a JWT setting (docs/auth.md)',
    }
  return { verdict: 'ok', check, message }
}

/**
 * Word conversion: LibreOffice found where `images.metafiles.soffice` says, with Draw (EMF/WMF
 * pictures) and Writer (`.doc` import); what to install when a part is missing. The server
 * runs without it, refusing what it cannot convert, so a missing part is a warning.
 */
function checkWord(config: ServerConfig): Finding {
  const word = wordSummary(wordConverter(config.images))
  const check = 'word'
  if (!word.known)
    return {
      verdict: 'info',
      check,
      message: word.message,
      verify:
        'upload an .emf through the image dialog, or run soffice --headless --convert-to png on one',
    }
  if (!word.ready) return { verdict: 'warn', check, message: word.message, fix: word.fix as string }
  return { verdict: 'ok', check, message: word.message }
}

/**
 * The optional packages the settings need (S3, PostgreSQL, AI, formulas, pretty logs): one
 * failure per package that is not installed, as the start would refuse it; nothing when all
 * are. Answers the names of the missing ones.
 */
function checkPackages(config: ServerConfig, findings: Finding[]): Set<string> {
  const missing = missingPackages(config)
  for (const m of missing)
    findings.push({
      verdict: 'fail',
      check: 'packages',
      message: `${m.setting} needs the npm package ${m.package}, which is not installed (UE_DEPENDENCY_MISSING)`,
      fix: `npm install ${m.package} (an optional dependency this install left out), or turn the setting off`,
    })
  return new Set(missing.map((m) => m.package))
}

/**
 * The listen address and port are free now (the start takes them before anything else), or
 * held by a running ueditor-server: doctor run next to the service checks that service.
 */
async function checkPort(host: string, port: number): Promise<Finding> {
  const check = 'port'
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`
  if (port === 0) return { verdict: 'ok', check, message: 'port 0: a free port is picked at start' }
  const probe = createServer()
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject)
      probe.listen({ host, port, exclusive: true }, resolve)
    })
    return { verdict: 'ok', check, message: `${where} is free` }
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === 'EADDRINUSE') {
      const running = await runningServer(host, port)
      if (running) return { ...running, check, message: `${where} ${running.message}` }
    }
    const why =
      code === 'EADDRINUSE'
        ? 'is in use by another process (not a ueditor-server: its /healthz does not answer as one)'
        : code === 'EACCES'
          ? 'needs privileges this user does not have'
          : code === 'EADDRNOTAVAIL'
            ? 'is not an address of this machine'
            : `cannot be listened on (${code})`
    return {
      verdict: 'fail',
      check,
      message: `${where} ${why}`,
      fix:
        code === 'EADDRINUSE'
          ? `stop the other server (ss -ltnp 'sport = :${port}' names it) or choose another port (PORT, http.port)`
          : 'choose another address or port (HOST, PORT)',
    }
  } finally {
    if (probe.listening) await new Promise((resolve) => probe.close(resolve))
  }
}

/** How long each request to a server found on the port may take. */
const PROBE_TIMEOUT_MS = 3_000

/**
 * Whether the server on `host:port` is a ueditor-server: its `/healthz` answers 200
 * `{"status":"ok"}` and returns the request id it was sent, and its `/readyz` answers as one.
 * What `/readyz` says then decides the line.
 */
async function runningServer(
  host: string,
  port: number,
): Promise<Omit<Finding, 'check'> | undefined> {
  const target = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host
  const base = `http://${target.includes(':') ? `[${target}]` : target}:${port}`
  const id = `doctor-${randomBytes(8).toString('hex')}`
  const get = async (path: string) => {
    // A timer that holds the process: a peer that drops the connection can leave fetch waiting
    // with nothing else alive, and AbortSignal.timeout's own timer would not keep doctor running.
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), PROBE_TIMEOUT_MS)
    try {
      const res = await fetch(`${base}${path}`, {
        headers: { 'x-request-id': id },
        signal: controller.signal,
      })
      const body = (await res.json().catch(() => null)) as Record<string, unknown> | null
      return { status: res.status, echoed: res.headers.get('x-request-id') === id, body }
    } finally {
      clearTimeout(timer)
    }
  }
  try {
    const health = await get('/healthz')
    if (
      health.status !== 200 ||
      !health.echoed ||
      JSON.stringify(health.body) !== JSON.stringify({ status: 'ok' })
    )
      return undefined
    const ready = await get('/readyz')
    if (!ready.echoed) return undefined
    if (ready.status === 200 && ready.body?.status === 'ready')
      return {
        verdict: 'ok',
        message: 'is held by a running ueditor-server (it answers /healthz, and /readyz: ready)',
      }
    const failed = Array.isArray(ready.body?.failed) ? (ready.body.failed as string[]) : []
    if (ready.status === 503 && failed.length > 0)
      return {
        verdict: 'warn',
        message: `is held by a running ueditor-server, which is not ready: /readyz names ${failed.join(', ')}`,
        fix: "see the lines below and the server's log (journalctl -u ueditor)",
      }
    if (ready.status === 503)
      return {
        verdict: 'ok',
        message: 'is held by a running ueditor-server, which is stopping (/readyz: 503)',
      }
    return undefined
  } catch {
    return undefined
  }
}

/**
 * With `http.trustProxy` set, the client's address comes from the proxy's `X-Forwarded-For`.
 * Whether the proxy sends it, doctor cannot see; it can see a trusted proxy that can never be
 * the peer (a loopback bind reached only from this machine).
 */
function checkProxy(config: ServerConfig): Finding {
  const check = 'proxy'
  const { host, trustProxy } = config.http
  const listed = trustProxy.join(', ')
  const ranges = parseTrustedProxies(trustProxy)
  const loopbackOnly = !isPublicBind(host) && host !== 'localhost'
  if (loopbackOnly && !isTrustedProxy('127.0.0.1', ranges) && !isTrustedProxy('::1', ranges))
    return {
      verdict: 'warn',
      check,
      message: `http.trustProxy (${listed}) names no loopback address, but the server listens on ${host}, which only this machine reaches: the client's address is never read from X-Forwarded-For, and every visitor counts as the proxy`,
      fix: 'with the proxy on this machine, set UEDITOR_TRUST_PROXY=loopback; with the proxy elsewhere, listen on an address it reaches (HOST)',
    }
  return {
    verdict: 'info',
    check,
    message: `the client's address is read from X-Forwarded-For on connections from ${listed} (http.trustProxy); doctor does not pass through the proxy, so it cannot see whether the proxy sends that header`,
    verify:
      "open a page through the proxy, then find that request's access line in the server's log (journalctl -u ueditor -o cat | grep '\"route\":\"editor\"' | tail -1): its client must be your own address, not the proxy's; nginx needs proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for (docs/deploy.md)",
  }
}

/** A folder the server writes to: writable if it exists, else creatable (its parent writable). */
async function checkFolder(check: string, path: string): Promise<Finding> {
  const info = await stat(path).catch(() => null)
  if (info && !info.isDirectory())
    return {
      verdict: 'fail',
      check,
      message: `${path} exists but is not a folder`,
      fix: `move that file away, or point the setting at a folder`,
    }
  if (info) {
    try {
      const probe = await mkdtemp(join(path, '.doctor-'))
      await rm(probe, { recursive: true, force: true })
      return { verdict: 'ok', check, message: `${path} is writable` }
    } catch (e) {
      return {
        verdict: 'fail',
        check,
        message: `${path} is not writable (${(e as NodeJS.ErrnoException).code})`,
        fix: `give the user running the server write access: chown -R <user> ${path}`,
      }
    }
  }
  const parent = await nearestExisting(path)
  try {
    await access(parent, constants.W_OK)
    return { verdict: 'ok', check, message: `${path} does not exist yet; it is created at start` }
  } catch {
    return {
      verdict: 'fail',
      check,
      message: `${path} does not exist and ${parent} is not writable`,
      fix: `create it for the user running the server: mkdir -p ${path} && chown <user> ${path}`,
    }
  }
}

async function checkSite(dir: string, dataDir: string): Promise<Finding> {
  const check = 'static site'
  if (dir === dataDir || dir.startsWith(`${dataDir}/`))
    return {
      verdict: 'fail',
      check,
      message: `${dir} is the data folder or inside it`,
      fix: 'serve a folder of its own (UEDITOR_STATIC_DIR), next to the data folder',
    }
  const info = await stat(dir).catch(() => null)
  if (!info?.isDirectory())
    return {
      verdict: 'fail',
      check,
      message: `${dir} is not a folder`,
      fix: 'create it and put the editor files and your page in it, or unset UEDITOR_STATIC_DIR',
    }
  const editor = await findEditorScript(dir, 3)
  if (!editor)
    return {
      verdict: 'fail',
      check,
      message: `${dir} has no ueditor.all.js (looked 3 folders deep): a page that loads the editor from this server gets 404`,
      fix: `copy the built editor (the folder holding ueditor.all.js, ueditor.config.js, dialogs/, lang/ and themes/) into it, e.g. ${join(dir, 'ueditor-plus')}/ (README, "First run")`,
    }
  return {
    verdict: 'ok',
    check,
    message: `${dir} is served at / (editor at /${editor.slice(dir.length + 1)})`,
  }
}

/** The first `ueditor.all.js` (or `.min.js`) under `dir`, breadth first, skipping dot-folders. */
async function findEditorScript(dir: string, depth: number): Promise<string | undefined> {
  let level = [dir]
  for (let i = 0; i < depth && level.length > 0; i++) {
    const next: string[] = []
    for (const folder of level) {
      const entries = await readdir(folder, { withFileTypes: true }).catch(() => [])
      for (const e of entries)
        if (e.isFile() && (e.name === 'ueditor.all.js' || e.name === 'ueditor.all.min.js'))
          return join(folder, e.name)
      for (const e of entries)
        if (e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules')
          next.push(join(folder, e.name))
    }
    level = next
  }
  return undefined
}

async function checkFreeSpace(config: ServerConfig): Promise<Finding> {
  const local = config.storage.driver === 'local'
  const folder = config.storage.driver === 'local' ? config.storage.root : config.uploads.tempDir
  const path = await nearestExisting(folder)
  const floor = config.limits.minFreeBytes
  const s = await statfs(path)
  const free = s.bavail * s.bsize
  const what = local ? 'the upload volume' : 'the temp spool volume'
  const message = `${mib(free)} free on ${what} (${path}); uploads stop below limits.minFreeBytes = ${mib(floor)}`
  if (free < floor)
    return {
      verdict: 'fail',
      check: 'free space',
      message,
      fix: 'free some space or move the data folder to a larger volume (UEDITOR_DATA_DIR)',
    }
  if (free < floor * 4)
    return {
      verdict: 'warn',
      check: 'free space',
      message,
      fix: 'uploads will be refused soon; free some space',
    }
  return { verdict: 'ok', check: 'free space', message }
}

async function checkDatabase(config: ServerConfig): Promise<Finding> {
  const index = config.index
  let label: string
  if (index.driver === 'sqlite') {
    label = `SQLite ${index.file} through ${resolveSqliteEngine(index.engine)}`
    // Opening would create the file; a fresh install has none yet and that is fine.
    if (!(await stat(index.file).catch(() => null)))
      return {
        verdict: 'ok',
        check: 'database',
        message: `${label}: no file yet; it is created at start`,
      }
  } else {
    const u = new URL(index.url)
    label = `PostgreSQL at ${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname}`
  }
  try {
    const store = await openMetadataStore(index)
    try {
      const unknown = await store.unknownMigrations()
      if (unknown.length > 0)
        return {
          verdict: 'fail',
          check: 'database',
          message: `${label}: ${newerIndex(unknown).message}`,
          fix: 'upgrade ueditor-server to the release that migrated this index (or a later one), or restore the index backup taken before that upgrade',
        }
      await store.files.list({ categories: ['image'], start: 0, size: 0 })
      return { verdict: 'ok', check: 'database', message: `${label} answers` }
    } catch {
      return {
        verdict: 'ok',
        check: 'database',
        message: `${label} answers; its tables are created or migrated at start`,
      }
    } finally {
      await store.close()
    }
  } catch (e) {
    const reason = isUeError(e) ? (e.detail ?? e.code) : (e as Error).message
    return {
      verdict: 'fail',
      check: 'database',
      message: `${label}: ${reason}`,
      fix:
        index.driver === 'sqlite'
          ? 'restore the file from a backup or point index.file (UEDITOR_SQLITE_FILE) elsewhere'
          : 'check UEDITOR_DATABASE_URL, that the server runs and accepts this user',
    }
  }
}

async function checkBucket(config: ServerConfig): Promise<Finding> {
  if (config.storage.driver !== 's3') throw new Error('not s3')
  const { bucket, endpoint } = config.storage
  const where = `bucket ${bucket}${endpoint ? ` at ${endpoint}` : ''}`
  const storage = await storageDriver(config.storage)
  // A HEAD of a missing key answers 404 whether or not the bucket exists, so the probe writes
  // a 2-byte object, reads its size back and deletes it: the three things the server does.
  const key = `doctor/${randomBytes(12).toString('hex')}.txt` as StorageKey
  try {
    await storage.put(key, Readable.from([Buffer.from('ok')]), {
      size: 2,
      contentType: 'text/plain',
    })
    const size = (await storage.stat(key))?.size
    await storage.delete(key)
    if (size !== 2) throw new Error(`a probe object read back with size ${size}`)
  } catch (e) {
    return {
      verdict: 'fail',
      check: 'bucket',
      message: `${where}: ${reasonOf(e)}`,
      fix: 'check the bucket name, UEDITOR_S3_ENDPOINT, the region and the credentials',
    }
  } finally {
    await storage.close?.()
  }
  const users = [
    ...(config.tus.enabled ? ['resumable uploads (tus)'] : []),
    ...(directUploadsServed(config) ? ['direct uploads'] : []),
  ]
  if (users.length === 0)
    return { verdict: 'ok', check: 'bucket', message: `${where} accepts writes, reads and deletes` }
  const multipart = await multipartProblem(config)
  if (multipart === undefined)
    return {
      verdict: 'ok',
      check: 'bucket',
      message: `${where} accepts writes, reads, deletes and multipart uploads (create, list parts, abort)`,
    }
  return {
    verdict: 'fail',
    check: 'bucket',
    message: `${where} accepts writes, reads and deletes, but not multipart uploads: ${multipart}; ${users.join(' and ')} would fail with 500`,
    fix: `use an S3 service with multipart uploads (CreateMultipartUpload, ListParts, AbortMultipartUpload), or turn off ${[
      ...(config.tus.enabled ? ['UEDITOR_TUS_ENABLED=false'] : []),
      ...(directUploadsServed(config) ? ['UEDITOR_DIRECT_UPLOADS=false'] : []),
    ].join(' and ')}`,
  }
}

/**
 * What resumable (tus) and direct uploads need of the bucket besides objects: one multipart
 * upload is created, its parts listed (none) and aborted, after which the bucket must no longer
 * know it. Undefined when all of that works, else what failed.
 */
async function multipartProblem(config: ServerConfig): Promise<string | undefined> {
  if (config.storage.driver !== 's3') throw new Error('not s3')
  const bucket = s3DirectBucket(s3Options(config.storage))
  const key = `doctor/${randomBytes(12).toString('hex')}.multipart` as StorageKey
  let step = 'CreateMultipartUpload'
  let open: string | undefined
  try {
    const uploadId = await bucket.createMultipart(key, 'application/octet-stream')
    open = uploadId
    step = 'ListParts'
    const parts = await bucket.listParts(key, uploadId)
    if (parts.length > 0) return `ListParts names ${parts.length} parts of an upload that has none`
    step = 'AbortMultipartUpload'
    await bucket.abort(key, uploadId)
    open = undefined
    step = 'ListParts after the abort'
    const left = await bucket.listParts(key, uploadId).then(
      () => true,
      (e: unknown) => {
        if (isUeError(e) && e.code === 'UE_NOT_FOUND') return false
        throw e
      },
    )
    if (left) return 'AbortMultipartUpload answered, but the upload is still there'
    return undefined
  } catch (e) {
    return `${step} failed (${reasonOf(e)})`
  } finally {
    if (open !== undefined) await bucket.abort(key, open).catch(() => {})
    await bucket.close()
  }
}

function reasonOf(e: unknown): string {
  const cause = (e as { cause?: unknown }).cause
  return cause instanceof Error ? cause.message : (e as Error).message
}

/**
 * On Node 20 the AWS SDK's own notice that its releases from 2027 need Node 22 is turned off in
 * the binary (cron mails every line); this line says it instead.
 */
function checkNodeForSdk(): Finding | undefined {
  const major = Number(process.versions.node.split('.')[0])
  if (major >= 22) return undefined
  return {
    verdict: 'info',
    check: 'node',
    message: `Node ${process.versions.node}: this release holds the AWS SDK (S3) at a version that runs on it; AWS SDK releases from January 2027 need Node 22 (docs/node-versions.md)`,
  }
}

/**
 * Whether the webhook's host takes a connection. Nothing is posted: a probe event would reach
 * the host app's handler as if it were real. An unreachable hook loses nothing (events wait in
 * the outbox and are retried), so it is a warning.
 */
async function checkWebhook(webhooks: ServerConfig['webhooks']): Promise<Finding> {
  const url = new URL(webhooks.url as string)
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80)
  const where = `${url.origin}${url.pathname}`
  const failure = await new Promise<string | undefined>((resolve) => {
    const socket = connect({ host: url.hostname.replace(/^\[|\]$/g, ''), port })
    socket.setTimeout(Math.min(webhooks.timeoutMs, 5_000), () => {
      socket.destroy()
      resolve('no answer to a connection in time')
    })
    socket.once('connect', () => {
      socket.destroy()
      resolve(undefined)
    })
    socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message))
  })
  if (failure === undefined)
    return { verdict: 'ok', check: 'webhook', message: `${where} takes connections` }
  return {
    verdict: 'warn',
    check: 'webhook',
    message: `${where} cannot be reached (${failure}); events wait in the outbox and are retried for webhooks.maxAgeMs`,
    fix: 'check UEDITOR_WEBHOOK_URL and that the receiving app runs and is reachable from this host',
  }
}

async function nearestExisting(path: string): Promise<string> {
  let p = path
  while (!(await stat(p).catch(() => null))) {
    const up = dirname(p)
    if (up === p) return p
    p = up
  }
  return p
}

function mib(bytes: number): string {
  return bytes >= 1024 ** 3
    ? `${(bytes / 1024 ** 3).toFixed(1)} GiB`
    : `${Math.round(bytes / 1024 ** 2)} MiB`
}
