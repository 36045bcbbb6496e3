import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { UeError } from '../shared/errors.js'
import { isPlainObject, PROTOTYPE_KEYS } from '../shared/plain-object.js'
import { pageKeyProblems, withAiDriver } from './ai-driver.js'
import { withFormulaRenderer } from './formula-url.js'
import { withOwnHosts } from './local-domains.js'
import { ACTIVE_CONTENT_EXTS, type ParsedServerConfig, ServerConfigSchema } from './schema.js'
import { knownKeysAt } from './schema-keys.js'
import { closest } from './suggest.js'
import { type UnknownEnvVar, unknownEnvVars } from './unknown-env.js'

/** The validated config with every derived path and URL filled in. */
export type ServerConfig = ParsedServerConfig & {
  dataDir: string
  publicUrl: string
  storage: { driver: 'local'; root: string } | S3Storage
  index: (SqliteIndex & { file: string }) | PostgresIndex
  uploads: ParsedServerConfig['uploads'] & { tempDir: string }
}

type SqliteIndex = Extract<ParsedServerConfig['index'], { driver: 'sqlite' }>

type PostgresIndex = Extract<ParsedServerConfig['index'], { driver: 'postgres' }>

type S3Storage = Extract<ParsedServerConfig['storage'], { driver: 's3' }>

type Kind = 'string' | 'int' | 'size' | 'list' | 'bool'
interface EnvVar {
  name: string
  paths: readonly (readonly string[])[]
  kind: Kind
  help: string
  /** Set but empty means an empty list, not "not set". */
  emptyClears?: true
}

const URL_PREFIX_KEYS = [
  'imageUrlPrefix',
  'scrawlUrlPrefix',
  'snapscreenUrlPrefix',
  'catcherUrlPrefix',
  'videoUrlPrefix',
  'audioUrlPrefix',
  'fileUrlPrefix',
  'imageManagerUrlPrefix',
  'fileManagerUrlPrefix',
]

const one = (...path: string[]) => [path]

/** Every environment variable the server reads. `docs/config.md` lists the same table. */
export const ENV_VARS: readonly EnvVar[] = [
  { name: 'HOST', paths: one('http', 'host'), kind: 'string', help: 'listen address' },
  { name: 'PORT', paths: one('http', 'port'), kind: 'int', help: 'listen port' },
  { name: 'UEDITOR_DATA_DIR', paths: one('dataDir'), kind: 'string', help: 'data folder' },
  {
    name: 'UEDITOR_CORS_ORIGINS',
    paths: one('http', 'corsOrigins'),
    kind: 'list',
    help: 'allowed browser origins, comma-separated',
  },
  {
    name: 'UEDITOR_TRUST_PROXY',
    paths: one('http', 'trustProxy'),
    kind: 'list',
    help: 'proxies whose X-Forwarded-For names the client, comma-separated',
  },
  { name: 'UEDITOR_LOCALE', paths: one('locale'), kind: 'string', help: 'zh-CN or en' },
  { name: 'UEDITOR_LOG_LEVEL', paths: one('logLevel'), kind: 'string', help: 'log level' },
  {
    name: 'UEDITOR_LOG_FORMAT',
    paths: one('logFormat'),
    kind: 'string',
    help: 'auto, json or pretty',
  },
  {
    name: 'UEDITOR_METRICS',
    paths: one('metrics', 'enabled'),
    kind: 'bool',
    help: 'serve /metrics',
  },
  {
    name: 'UEDITOR_METRICS_TOKEN',
    paths: one('metrics', 'token'),
    kind: 'string',
    help: 'Bearer token for /metrics',
  },
  {
    name: 'UEDITOR_PUBLIC_URL',
    paths: one('publicUrl'),
    kind: 'string',
    help: 'base URL of stored files in results',
  },
  {
    name: 'UEDITOR_STORAGE_ROOT',
    paths: one('storage', 'root'),
    kind: 'string',
    help: 'upload folder',
  },
  { name: 'UEDITOR_STORAGE', paths: one('storage', 'driver'), kind: 'string', help: 'local or s3' },
  { name: 'UEDITOR_S3_BUCKET', paths: one('storage', 'bucket'), kind: 'string', help: 'S3 bucket' },
  { name: 'UEDITOR_S3_REGION', paths: one('storage', 'region'), kind: 'string', help: 'S3 region' },
  {
    name: 'UEDITOR_S3_ENDPOINT',
    paths: one('storage', 'endpoint'),
    kind: 'string',
    help: 'S3-compatible endpoint URL',
  },
  {
    name: 'UEDITOR_S3_FORCE_PATH_STYLE',
    paths: one('storage', 'forcePathStyle'),
    kind: 'bool',
    help: 'path-style bucket addressing',
  },
  {
    name: 'UEDITOR_S3_ACCESS_KEY_ID',
    paths: one('storage', 'accessKeyId'),
    kind: 'string',
    help: 'S3 access key id',
  },
  {
    name: 'UEDITOR_S3_SECRET_ACCESS_KEY',
    paths: one('storage', 'secretAccessKey'),
    kind: 'string',
    help: 'S3 secret key',
  },
  {
    name: 'UEDITOR_S3_PREFIX',
    paths: one('storage', 'prefix'),
    kind: 'string',
    help: 'key prefix',
  },
  { name: 'UEDITOR_SQLITE_FILE', paths: one('index', 'file'), kind: 'string', help: 'SQLite file' },
  {
    name: 'UEDITOR_SQLITE_ENGINE',
    paths: one('index', 'engine'),
    kind: 'string',
    help: 'auto, node:sqlite or better-sqlite3',
  },
  {
    name: 'UEDITOR_INDEX_DRIVER',
    paths: one('index', 'driver'),
    kind: 'string',
    help: 'sqlite or postgres',
  },
  {
    name: 'UEDITOR_DATABASE_URL',
    paths: one('index', 'url'),
    kind: 'string',
    help: 'PostgreSQL URL; selects the postgres driver',
  },
  {
    name: 'UEDITOR_DATABASE_POOL_SIZE',
    paths: one('index', 'poolSize'),
    kind: 'int',
    help: 'PostgreSQL connections per server',
  },
  {
    name: 'UEDITOR_TEMP_DIR',
    paths: one('uploads', 'tempDir'),
    kind: 'string',
    help: 'spool folder',
  },
  {
    name: 'UEDITOR_EDITOR_PATH',
    paths: one('routes', 'editor'),
    kind: 'string',
    help: 'editor URL path',
  },
  {
    name: 'UEDITOR_FILES_PATH',
    paths: one('routes', 'files'),
    kind: 'string',
    help: 'files URL path',
  },
  {
    name: 'UEDITOR_MATERIALS_PATH',
    paths: one('routes', 'materials'),
    kind: 'string',
    help: 'materials API URL path',
  },
  {
    name: 'UEDITOR_MATERIALS_ENABLED',
    paths: one('materials', 'enabled'),
    kind: 'bool',
    help: 'serve the materials API',
  },
  {
    name: 'UEDITOR_MATERIALS_TOKENS',
    paths: one('materials', 'tokens'),
    kind: 'list',
    help: 'materials read tokens, comma-separated',
  },
  {
    name: 'UEDITOR_MATERIALS_ADMIN_TOKENS',
    paths: one('materials', 'adminTokens'),
    kind: 'list',
    help: 'materials admin tokens, comma-separated',
  },
  {
    name: 'UEDITOR_MATERIALS_SEED',
    paths: one('materials', 'seed'),
    kind: 'bool',
    help: 'load demo materials on first start',
  },
  {
    name: 'UEDITOR_ERROR_STATUS',
    paths: one('http', 'errorStatus'),
    kind: 'string',
    help: 'protocol or http',
  },
  {
    name: 'UEDITOR_JSONP_ACTIONS',
    paths: one('http', 'jsonpActions'),
    kind: 'list',
    help: 'action kinds answering JSONP',
  },
  {
    name: 'UEDITOR_SHUTDOWN_GRACE_MS',
    paths: one('http', 'shutdownGraceMs'),
    kind: 'int',
    help: 'drain time on SIGTERM',
  },
  {
    name: 'UEDITOR_DRAIN_MAX_BYTES',
    paths: one('http', 'drainMaxBytes'),
    kind: 'size',
    help: 'unread body bytes read before a refusal',
  },
  {
    name: 'UEDITOR_DRAIN_TIMEOUT_MS',
    paths: one('http', 'drainTimeoutMs'),
    kind: 'int',
    help: 'time spent reading a refused body',
  },
  {
    name: 'UEDITOR_URL_PREFIX',
    paths: URL_PREFIX_KEYS.map((k) => ['editor', k]),
    kind: 'string',
    help: 'every *UrlPrefix at once',
  },
  ...(['image', 'scrawl', 'catcher', 'video', 'audio', 'file'] as const).map(
    (kind): EnvVar => ({
      name: `UEDITOR_${kind.toUpperCase()}_MAX_SIZE`,
      paths: one('editor', `${kind}MaxSize`),
      kind: 'size',
      help: `${kind}MaxSize: bytes, or a size such as 2MB`,
    }),
  ),
  ...(['image', 'catcher', 'video', 'audio', 'file'] as const).map(
    (kind): EnvVar => ({
      name: `UEDITOR_${kind.toUpperCase()}_ALLOW_FILES`,
      paths: one('editor', `${kind}AllowFiles`),
      kind: 'list',
      help: `${kind}AllowFiles, comma-separated`,
    }),
  ),
  {
    name: 'UEDITOR_STATIC_DIR',
    paths: one('site', 'dir'),
    kind: 'string',
    help: 'folder served at / (the editor files and your page)',
  },
  {
    name: 'UEDITOR_EDITOR_EXTRA_KEYS',
    paths: one('editorExtraKeys'),
    kind: 'list',
    help: 'deliberate custom editor keys, comma-separated',
  },
  {
    name: 'UEDITOR_CATCHER_LOCAL_DOMAIN',
    paths: one('editor', 'catcherLocalDomain'),
    kind: 'list',
    help: 'hosts never captured, comma-separated; set empty for none',
    emptyClears: true,
  },
  {
    name: 'UEDITOR_CATCHER_ALLOW_HOSTS',
    paths: one('catcher', 'allowHosts'),
    kind: 'list',
    help: 'hosts or host:port captured even when not public',
  },
  {
    name: 'UEDITOR_CATCHER_TIMEOUT_MS',
    paths: one('catcher', 'timeoutMs'),
    kind: 'int',
    help: 'time allowed to fetch one source',
  },
  {
    name: 'UEDITOR_CATCHER_USER_AGENT',
    paths: one('catcher', 'userAgent'),
    kind: 'string',
    help: 'User-Agent sent when capturing',
  },
  {
    name: 'UEDITOR_CATCHER_REFERER',
    paths: one('catcher', 'referer'),
    kind: 'string',
    help: 'none or origin',
  },
  {
    name: 'UEDITOR_IMAGES_ENABLED',
    paths: one('images', 'enabled'),
    kind: 'bool',
    help: 're-encode stored images',
  },
  {
    name: 'UEDITOR_IMAGES_MAX_PIXELS',
    paths: one('images', 'maxPixels'),
    kind: 'int',
    help: 'pixel budget per image',
  },
  {
    name: 'UEDITOR_IMAGES_MAX_FRAMES',
    paths: one('images', 'maxFrames'),
    kind: 'int',
    help: 'frames per animation',
  },
  {
    name: 'UEDITOR_IMAGES_KEEP_METADATA',
    paths: one('images', 'keepMetadata'),
    kind: 'bool',
    help: 'keep EXIF and other metadata',
  },
  {
    name: 'UEDITOR_IMAGES_FORMAT',
    paths: one('images', 'format'),
    kind: 'string',
    help: 'keep or webp',
  },
  {
    name: 'UEDITOR_IMAGES_QUALITY',
    paths: one('images', 'quality'),
    kind: 'int',
    help: 'JPEG/WebP/AVIF quality',
  },
  {
    name: 'UEDITOR_IMAGES_WATERMARK',
    paths: one('images', 'watermark', 'file'),
    kind: 'string',
    help: 'watermark image file',
  },
  {
    name: 'UEDITOR_LIMIT_UPLOADS_PER_MINUTE',
    paths: one('limits', 'uploadsPerMinute'),
    kind: 'int',
    help: 'uploads per client per minute',
  },
  {
    name: 'UEDITOR_LIMIT_CONCURRENT_UPLOADS',
    paths: one('limits', 'concurrentUploads'),
    kind: 'int',
    help: 'uploads in flight per client',
  },
  {
    name: 'UEDITOR_LIMIT_UPLOAD_QUEUE',
    paths: one('limits', 'uploadQueue'),
    kind: 'int',
    help: 'uploads waiting for a slot per client',
  },
  {
    name: 'UEDITOR_LIMIT_UPLOAD_QUEUE_WAIT_MS',
    paths: one('limits', 'uploadQueueWaitMs'),
    kind: 'int',
    help: 'longest wait for an upload slot',
  },
  {
    name: 'UEDITOR_LIMIT_MIN_FREE_BYTES',
    paths: one('limits', 'minFreeBytes'),
    kind: 'size',
    help: 'free space kept on the storage volume',
  },
  {
    name: 'UEDITOR_LIMIT_CONNECTIONS_PER_CLIENT',
    paths: one('limits', 'connectionsPerClient'),
    kind: 'int',
    help: 'open connections per client address',
  },
  {
    name: 'UEDITOR_LIMIT_EXEMPT_USERS',
    paths: one('limits', 'exemptUsers'),
    kind: 'list',
    help: 'users the per-client upload limits skip',
  },
  {
    name: 'UEDITOR_FORMULA_ENABLED',
    paths: one('formula', 'enabled'),
    kind: 'bool',
    help: 'serve the TeX formula renderer',
  },
  {
    name: 'UEDITOR_FORMULA_TIMEOUT_MS',
    paths: one('formula', 'timeoutMs'),
    kind: 'int',
    help: 'time budget of one formula render',
  },
  {
    name: 'UEDITOR_FORMULA_WORKERS',
    paths: one('formula', 'workers'),
    kind: 'int',
    help: 'formula render worker threads',
  },
  {
    name: 'UEDITOR_QUOTA_BYTES',
    paths: one('limits', 'quotaBytes'),
    kind: 'size',
    help: 'bytes stored per user (2GB; 0: no quota)',
  },
  { name: 'UEDITOR_AUTH', paths: one('auth', 'mode'), kind: 'string', help: 'auth mode' },
  { name: 'UEDITOR_AUTH_TOKENS', paths: one('auth', 'tokens'), kind: 'list', help: 'user:token' },
  {
    name: 'UEDITOR_AUTH_ADMIN_USERS',
    paths: one('auth', 'adminUsers'),
    kind: 'list',
    help: 'admin users',
  },
  {
    name: 'UEDITOR_AUTH_JWT_SECRET',
    paths: one('auth', 'jwt', 'secret'),
    kind: 'string',
    help: 'HS256 secret',
  },
  {
    name: 'UEDITOR_AUTH_JWKS_URL',
    paths: one('auth', 'jwt', 'jwksUrl'),
    kind: 'string',
    help: 'JWKS URL',
  },
  {
    name: 'UEDITOR_AUTH_JWT_ALGORITHMS',
    paths: one('auth', 'jwt', 'algorithms'),
    kind: 'list',
    help: 'pinned JWT algorithms',
  },
  {
    name: 'UEDITOR_AUTH_JWT_ISSUER',
    paths: one('auth', 'jwt', 'issuer'),
    kind: 'string',
    help: 'expected iss',
  },
  {
    name: 'UEDITOR_AUTH_JWT_AUDIENCE',
    paths: one('auth', 'jwt', 'audience'),
    kind: 'string',
    help: 'expected aud',
  },
  {
    name: 'UEDITOR_AUTH_JWT_ADMIN_CLAIM',
    paths: one('auth', 'jwt', 'adminClaim'),
    kind: 'string',
    help: 'claim granting admin',
  },
  { name: 'UEDITOR_AUTH_HEADER', paths: one('auth', 'header'), kind: 'string', help: 'header' },
  {
    name: 'UEDITOR_AUTH_QUERY_PARAM',
    paths: one('auth', 'queryParam'),
    kind: 'string',
    help: 'query parameter',
  },
  {
    name: 'UEDITOR_AUTH_PUBLIC_CONFIG',
    paths: one('auth', 'publicConfig'),
    kind: 'bool',
    help: 'config without a credential',
  },
  {
    name: 'UEDITOR_AUTH_SHARED_LIBRARY',
    paths: one('auth', 'sharedLibrary'),
    kind: 'bool',
    help: 'listings show every user',
  },
  {
    name: 'UEDITOR_AUTH_FAILURES_PER_MINUTE',
    paths: one('auth', 'failuresPerMinute'),
    kind: 'int',
    help: 'failed credentials per address per minute',
  },
  {
    name: 'UEDITOR_AI_BASE_URL',
    paths: one('ai', 'baseUrl'),
    kind: 'string',
    help: 'OpenAI-compatible API base URL',
  },
  { name: 'UEDITOR_AI_API_KEY', paths: one('ai', 'apiKey'), kind: 'string', help: 'model key' },
  { name: 'UEDITOR_AI_MODEL', paths: one('ai', 'model'), kind: 'string', help: 'default model' },
  {
    name: 'UEDITOR_AI_MODELS',
    paths: one('ai', 'models'),
    kind: 'list',
    help: 'more models a client may choose',
  },
  {
    name: 'UEDITOR_AI_DAILY_TOKENS',
    paths: one('ai', 'dailyTokens'),
    kind: 'int',
    help: 'tokens per user per day',
  },
  {
    name: 'UEDITOR_AI_REQUESTS_PER_MINUTE',
    paths: one('ai', 'requestsPerMinute'),
    kind: 'int',
    help: 'AI calls per user per minute',
  },
  {
    name: 'UEDITOR_DELETE_ENABLED',
    paths: one('delete', 'enabled'),
    kind: 'bool',
    help: 'the delete action',
  },
]

export interface LoadOptions {
  /** Path of a JSON config file; `UEDITOR_CONFIG` is used when absent. */
  configFile?: string
  env?: NodeJS.ProcessEnv
  /** Programmatic values, applied last. */
  overrides?: unknown
  cwd?: string
}

/** defaults ← JSON file ← environment ← overrides, validated once; throws UE_CONFIG_INVALID. */
export function loadConfig(options: LoadOptions = {}): ServerConfig {
  const env = options.env ?? process.env
  const cwd = options.cwd ?? process.cwd()
  const problems: string[] = []
  const file = options.configFile ?? env.UEDITOR_CONFIG
  let fromFile: unknown = {}
  if (file) {
    try {
      fromFile = JSON.parse(readFileSync(resolve(cwd, file), 'utf8'))
    } catch (e) {
      problems.push(`config file ${file}: ${(e as Error).message}`)
    }
  }
  const fromEnv: Record<string, unknown> = {}
  for (const v of ENV_VARS) {
    const raw = env[v.name]
    if (raw === undefined || (raw === '' && !v.emptyClears)) continue
    for (const path of v.paths) setPath(fromEnv, path, parseEnv(raw, v.kind))
  }
  if (env.UEDITOR_DATABASE_URL && !env.UEDITOR_INDEX_DRIVER)
    setPath(fromEnv, ['index', 'driver'], 'postgres')
  const merged = deepMerge(deepMerge(fromFile, fromEnv), options.overrides ?? {})
  // A section without a driver (`UEDITOR_SQLITE_FILE` or `UEDITOR_STORAGE_ROOT` alone) means
  // the embedded default; a bucket alone means S3.
  if (isPlainObject(merged)) {
    if (isPlainObject(merged.index) && merged.index.driver === undefined)
      merged.index = { ...merged.index, driver: 'sqlite' }
    if (isPlainObject(merged.storage) && merged.storage.driver === undefined)
      merged.storage = { ...merged.storage, driver: 'bucket' in merged.storage ? 's3' : 'local' }
  }
  const source = sourceOf({ file, fromFile, env, overrides: options.overrides ?? {} })
  for (const unknown of unknownVariables(env)) if (unknown.refused) problems.push(unknown.message)
  problems.push(...activeContentProblems(merged, source), ...pageKeyProblems(merged))
  const result = ServerConfigSchema.safeParse(merged)
  if (!result.success) {
    for (const issue of result.error.issues) {
      const path = issue.path.map(String)
      if (issue.code === 'unrecognized_keys') {
        // Reported on the parent object: one line per key, named with its layer and the nearest key.
        const known = knownKeysAt(ServerConfigSchema, issue.path as (string | number)[])
        for (const key of issue.keys) {
          const near = closest(key, known)
          const hint = near ? ` (did you mean ${[...path, near].join('.')}?)` : ''
          problems.push(
            `${[...path, key].join('.')}${source([...path, key], false)}: unknown key${hint}`,
          )
        }
        continue
      }
      problems.push(`${path.join('.') || '(root)'}${source(path)}: ${issue.message}`)
    }
  }
  if (problems.length > 0 || !result.success) {
    throw new UeError('UE_CONFIG_INVALID', { detail: `\n  - ${problems.join('\n  - ')}` })
  }
  return resolveDerived(result.data, cwd)
}

/**
 * `UEDITOR_*` variables the server does not read. A likely typo of one of ours, or anything
 * under `UEDITOR_AUTH`, is refused by `loadConfig`; the others are for the caller to warn about.
 */
export function unknownVariables(env: NodeJS.ProcessEnv = process.env): UnknownEnvVar[] {
  return unknownEnvVars(env, [...ENV_VARS.map((v) => v.name), 'UEDITOR_CONFIG'])
}

export function resolveDerived(cfg: ParsedServerConfig, cwd: string): ServerConfig {
  const dataDir = resolve(cwd, cfg.dataDir)
  const publicUrl = cfg.publicUrl ?? `${cfg.routes.files}/`
  return {
    ...cfg,
    dataDir,
    publicUrl,
    storage:
      cfg.storage.driver === 'local'
        ? { driver: 'local', root: resolve(dataDir, cfg.storage.root ?? 'uploads') }
        : cfg.storage,
    index:
      cfg.index.driver === 'sqlite'
        ? { ...cfg.index, file: resolve(dataDir, cfg.index.file ?? 'ueditor.db') }
        : cfg.index,
    uploads: { ...cfg.uploads, tempDir: resolve(dataDir, cfg.uploads.tempDir ?? 'tmp') },
    site: cfg.site.dir ? { ...cfg.site, dir: resolve(cwd, cfg.site.dir) } : cfg.site,
    editor: withOwnHosts(
      withAiDriver(withFormulaRenderer(withStoredImageExts(cfg.editor, cfg.images), cfg), cfg),
      publicUrl,
    ),
    images: cfg.images.watermark
      ? {
          ...cfg.images,
          watermark: { ...cfg.images.watermark, file: resolve(cwd, cfg.images.watermark.file) },
        }
      : cfg.images,
  }
}

/** With `images.format: 'webp'`, images are stored as .webp: listings must include them. */
function withStoredImageExts(
  editor: ParsedServerConfig['editor'],
  images: ParsedServerConfig['images'],
): ParsedServerConfig['editor'] {
  if (!images.enabled || images.format !== 'webp') return editor
  const add = (list: string[]) => (list.includes('.webp') ? list : [...list, '.webp'])
  return {
    ...editor,
    imageManagerAllowFiles: add(editor.imageManagerAllowFiles),
    fileManagerAllowFiles: add(editor.fileManagerAllowFiles),
  }
}

type SourceOf = (path: readonly string[], withValue?: boolean) => string

/**
 * Names the layer a config value came from, and the value: ` (from UEDITOR_X=raw)`,
 * ` (from ueditor.json: -1)`, ` (from code: -1)`. Secrets (keys, passwords, tokens) are named
 * but never shown.
 */
function sourceOf(layers: {
  file: string | undefined
  fromFile: unknown
  env: NodeJS.ProcessEnv
  overrides: unknown
}): SourceOf {
  return (path, withValue = true) => {
    const dotted = path.join('.')
    const secret = SECRET_PATHS.some((p) => dotted === p || dotted.startsWith(`${p}.`))
    const show = (v: unknown) => (!withValue ? '' : `: ${secret ? '<hidden>' : preview(v)}`)
    const inOverrides = getPath(layers.overrides, path)
    if (inOverrides.found) return ` (from code${show(inOverrides.value)})`
    const envVar = ENV_VARS.find(
      (v) =>
        layers.env[v.name] &&
        v.paths.some((p) => dotted === p.join('.') || dotted.startsWith(`${p.join('.')}.`)),
    )
    if (envVar) {
      const raw = secret ? '<hidden>' : JSON.stringify(layers.env[envVar.name]).slice(1, -1)
      return ` (from ${envVar.name}=${raw})`
    }
    const inFile = getPath(layers.fromFile, path)
    if (inFile.found && layers.file) return ` (from ${layers.file}${show(inFile.value)})`
    return withValue ? ' (not set)' : ''
  }
}

const SECRET_PATHS = [
  'storage.accessKeyId',
  'storage.secretAccessKey',
  'index.url',
  'materials.tokens',
  'materials.adminTokens',
  'auth.tokens',
  'auth.jwt.secret',
  'ai.apiKey',
  'metrics.token',
]

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 80 ? `${text.slice(0, 77)}...` : text
}

function getPath(root: unknown, path: readonly string[]): { found: boolean; value?: unknown } {
  let node = root
  for (const key of path) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key))
      return { found: false }
    node = (node as Record<string, unknown>)[key]
  }
  return { found: true, value: node }
}

/** Script-capable extensions in any allow-list need `security.allowActiveContent`. */
function activeContentProblems(input: unknown, source: SourceOf): string[] {
  if (!isPlainObject(input) || !isPlainObject(input.editor)) return []
  if (isPlainObject(input.security) && input.security.allowActiveContent === true) return []
  const problems: string[] = []
  for (const [key, value] of Object.entries(input.editor)) {
    if (!key.endsWith('AllowFiles') || !Array.isArray(value)) continue
    for (const ext of value) {
      const normal = typeof ext === 'string' ? ext.trim().toLowerCase() : ''
      if (ACTIVE_CONTENT_EXTS.has(normal))
        problems.push(
          `editor.${key}${source(['editor', key], false)}: "${normal}" can carry script; set security.allowActiveContent to allow it`,
        )
    }
  }
  return problems
}

function parseEnv(raw: string, kind: Kind): unknown {
  if (kind === 'list')
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
  if (kind === 'int') return /^-?\d+$/.test(raw.trim()) ? Number(raw) : raw
  if (kind === 'bool') {
    const v = raw.trim().toLowerCase()
    if (v === 'true' || v === '1') return true
    if (v === 'false' || v === '0') return false
  }
  return raw
}

/** Plain objects merge key by key; arrays and scalars replace. Prototype keys are dropped. */
export function deepMerge(base: unknown, over: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(over)) return over === undefined ? base : over
  const out: Record<string, unknown> = Object.create(null)
  for (const [k, v] of Object.entries(base)) if (!PROTOTYPE_KEYS.has(k)) out[k] = v
  for (const [k, v] of Object.entries(over)) {
    if (PROTOTYPE_KEYS.has(k)) continue
    out[k] = deepMerge(out[k], v)
  }
  return { ...out }
}

function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target
  for (const key of path.slice(0, -1)) {
    if (!isPlainObject(node[key])) node[key] = {}
    node = node[key] as Record<string, unknown>
  }
  node[path[path.length - 1] as string] = value
}
