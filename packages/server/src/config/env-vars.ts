import type * as z from '#zod'
import { isPlainObject } from '../shared/plain-object.js'
import { isSizeSchema, ServerConfigSchema } from './schema.js'
import { defOf, knownKeysAt, schemasAt } from './schema-keys.js'

/** How a variable's text is read, from the schema of the key it sets. */
export type EnvKind = 'string' | 'enum' | 'number' | 'bool' | 'size' | 'list'

export interface EnvVar {
  name: string
  /** The key it sets, as `docs/config.md` writes it; `*` stands for any letters of a key. */
  path: string
  /** Every key it sets (`editor.*UrlPrefix` is nine). */
  paths: readonly (readonly string[])[]
  kind: EnvKind
  /** Its line in `ueditor-server --help`: the key, the form of the value and its default. */
  help: string
  /** Set but empty means an empty list, not "not set". */
  emptyClears?: true
}

/** Where a variable differs from "its key's kind, read from the text". */
interface EnvOverride {
  emptyClears?: true
  /** Said after the key in `--help`. */
  note?: string
}

export type EnvLine = readonly [name: string, path: string, override?: EnvOverride]

/** Every environment variable the server reads; `docs/config.md` lists the same table. */
const LINES: readonly EnvLine[] = [
  ['HOST', 'http.host'],
  ['PORT', 'http.port'],
  ['UEDITOR_DATA_DIR', 'dataDir'],
  ['UEDITOR_CORS_ORIGINS', 'http.corsOrigins'],
  ['UEDITOR_TRUST_PROXY', 'http.trustProxy'],
  ['UEDITOR_LOCALE', 'locale'],
  ['UEDITOR_LOG_LEVEL', 'logLevel'],
  ['UEDITOR_LOG_FORMAT', 'logFormat'],
  ['UEDITOR_METRICS', 'metrics.enabled'],
  ['UEDITOR_METRICS_TOKEN', 'metrics.token'],
  ['UEDITOR_PUBLIC_URL', 'publicUrl'],
  ['UEDITOR_STORAGE_ROOT', 'storage.root'],
  ['UEDITOR_STORAGE', 'storage.driver'],
  ['UEDITOR_S3_BUCKET', 'storage.bucket'],
  ['UEDITOR_S3_REGION', 'storage.region'],
  ['UEDITOR_S3_ENDPOINT', 'storage.endpoint'],
  ['UEDITOR_S3_FORCE_PATH_STYLE', 'storage.forcePathStyle'],
  ['UEDITOR_S3_ACCESS_KEY_ID', 'storage.accessKeyId'],
  ['UEDITOR_S3_SECRET_ACCESS_KEY', 'storage.secretAccessKey'],
  ['UEDITOR_S3_PREFIX', 'storage.prefix'],
  ['UEDITOR_SQLITE_FILE', 'index.file'],
  ['UEDITOR_SQLITE_ENGINE', 'index.engine'],
  ['UEDITOR_INDEX_DRIVER', 'index.driver'],
  ['UEDITOR_DATABASE_URL', 'index.url', { note: 'selects index.driver postgres' }],
  ['UEDITOR_DATABASE_POOL_SIZE', 'index.poolSize'],
  ['UEDITOR_DATABASE_PREPARED_STATEMENTS', 'index.preparedStatements'],
  ['UEDITOR_TEMP_DIR', 'uploads.tempDir'],
  ['UEDITOR_EDITOR_PATH', 'routes.editor'],
  ['UEDITOR_FILES_PATH', 'routes.files'],
  ['UEDITOR_MATERIALS_PATH', 'routes.materials'],
  ['UEDITOR_S3_PATH', 'routes.s3'],
  ['UEDITOR_DIRECT_UPLOADS', 'direct.enabled'],
  ['UEDITOR_DIRECT_SIGNED_URL_SECONDS', 'direct.signedUrlSeconds'],
  ['UEDITOR_TUS_PATH', 'routes.tus'],
  ['UEDITOR_TUS_ENABLED', 'tus.enabled'],
  ['UEDITOR_UPLOAD_EXPIRY_MS', 'uploads.expiryMs'],
  ['UEDITOR_MATERIALS_ENABLED', 'materials.enabled'],
  ['UEDITOR_MATERIALS_TOKENS', 'materials.tokens'],
  ['UEDITOR_MATERIALS_ADMIN_TOKENS', 'materials.adminTokens'],
  ['UEDITOR_MATERIALS_SEED', 'materials.seed'],
  ['UEDITOR_ERROR_STATUS', 'http.errorStatus'],
  ['UEDITOR_JSONP_ACTIONS', 'http.jsonpActions'],
  ['UEDITOR_SHUTDOWN_GRACE_MS', 'http.shutdownGraceMs'],
  ['UEDITOR_DRAIN_MAX_BYTES', 'http.drainMaxBytes'],
  ['UEDITOR_DRAIN_TIMEOUT_MS', 'http.drainTimeoutMs'],
  ['UEDITOR_URL_PREFIX', 'editor.*UrlPrefix'],
  ['UEDITOR_IMAGE_MAX_SIZE', 'editor.imageMaxSize'],
  ['UEDITOR_SCRAWL_MAX_SIZE', 'editor.scrawlMaxSize'],
  ['UEDITOR_CATCHER_MAX_SIZE', 'editor.catcherMaxSize'],
  ['UEDITOR_VIDEO_MAX_SIZE', 'editor.videoMaxSize'],
  ['UEDITOR_AUDIO_MAX_SIZE', 'editor.audioMaxSize'],
  ['UEDITOR_FILE_MAX_SIZE', 'editor.fileMaxSize'],
  ['UEDITOR_IMAGE_ALLOW_FILES', 'editor.imageAllowFiles'],
  ['UEDITOR_CATCHER_ALLOW_FILES', 'editor.catcherAllowFiles'],
  ['UEDITOR_VIDEO_ALLOW_FILES', 'editor.videoAllowFiles'],
  ['UEDITOR_AUDIO_ALLOW_FILES', 'editor.audioAllowFiles'],
  ['UEDITOR_FILE_ALLOW_FILES', 'editor.fileAllowFiles'],
  ['UEDITOR_STATIC_DIR', 'site.dir'],
  ['UEDITOR_EDITOR_EXTRA_KEYS', 'editorExtraKeys'],
  ['UEDITOR_CATCHER_LOCAL_DOMAIN', 'editor.catcherLocalDomain', { emptyClears: true }],
  ['UEDITOR_CATCHER_ALLOW_HOSTS', 'catcher.allowHosts'],
  ['UEDITOR_CATCHER_TIMEOUT_MS', 'catcher.timeoutMs'],
  ['UEDITOR_CATCHER_USER_AGENT', 'catcher.userAgent'],
  ['UEDITOR_CATCHER_REFERER', 'catcher.referer'],
  ['UEDITOR_IMAGES_ENABLED', 'images.enabled'],
  ['UEDITOR_IMAGES_MAX_PIXELS', 'images.maxPixels'],
  ['UEDITOR_IMAGES_MAX_FRAMES', 'images.maxFrames'],
  ['UEDITOR_IMAGES_KEEP_METADATA', 'images.keepMetadata'],
  ['UEDITOR_IMAGES_FORMAT', 'images.format'],
  ['UEDITOR_IMAGES_QUALITY', 'images.quality'],
  ['UEDITOR_IMAGES_SOFFICE', 'images.metafiles.soffice'],
  ['UEDITOR_IMAGES_WATERMARK', 'images.watermark.file'],
  ['UEDITOR_LIMIT_UPLOADS_PER_MINUTE', 'limits.uploadsPerMinute'],
  ['UEDITOR_LIMIT_CONCURRENT_UPLOADS', 'limits.concurrentUploads'],
  ['UEDITOR_LIMIT_UPLOAD_QUEUE', 'limits.uploadQueue'],
  ['UEDITOR_LIMIT_UPLOAD_QUEUE_WAIT_MS', 'limits.uploadQueueWaitMs'],
  ['UEDITOR_LIMIT_MIN_FREE_BYTES', 'limits.minFreeBytes'],
  ['UEDITOR_LIMIT_CONNECTIONS_PER_CLIENT', 'limits.connectionsPerClient'],
  ['UEDITOR_LIMIT_EXEMPT_USERS', 'limits.exemptUsers'],
  ['UEDITOR_FORMULA_ENABLED', 'formula.enabled'],
  ['UEDITOR_FORMULA_TIMEOUT_MS', 'formula.timeoutMs'],
  ['UEDITOR_FORMULA_WORKERS', 'formula.workers'],
  ['UEDITOR_QUOTA_BYTES', 'limits.quotaBytes'],
  ['UEDITOR_AUTH', 'auth.mode'],
  ['UEDITOR_AUTH_TOKENS', 'auth.tokens'],
  ['UEDITOR_AUTH_ADMIN_USERS', 'auth.adminUsers'],
  ['UEDITOR_AUTH_JWT_SECRET', 'auth.jwt.secret'],
  ['UEDITOR_AUTH_JWKS_URL', 'auth.jwt.jwksUrl'],
  ['UEDITOR_AUTH_JWT_ALGORITHMS', 'auth.jwt.algorithms'],
  ['UEDITOR_AUTH_JWT_ISSUER', 'auth.jwt.issuer'],
  ['UEDITOR_AUTH_JWT_AUDIENCE', 'auth.jwt.audience'],
  ['UEDITOR_AUTH_JWT_ADMIN_CLAIM', 'auth.jwt.adminClaim'],
  ['UEDITOR_AUTH_HEADER', 'auth.header'],
  ['UEDITOR_AUTH_QUERY_PARAM', 'auth.queryParam'],
  ['UEDITOR_AUTH_PUBLIC_CONFIG', 'auth.publicConfig'],
  ['UEDITOR_AUTH_SHARED_LIBRARY', 'auth.sharedLibrary'],
  ['UEDITOR_AUTH_FAILURES_PER_MINUTE', 'auth.failuresPerMinute'],
  ['UEDITOR_AI_BASE_URL', 'ai.baseUrl'],
  ['UEDITOR_AI_API_KEY', 'ai.apiKey'],
  ['UEDITOR_AI_MODEL', 'ai.model'],
  ['UEDITOR_AI_MODELS', 'ai.models'],
  ['UEDITOR_AI_DAILY_TOKENS', 'ai.dailyTokens'],
  ['UEDITOR_AI_REQUESTS_PER_MINUTE', 'ai.requestsPerMinute'],
  ['UEDITOR_DELETE_ENABLED', 'delete.enabled'],
  ['UEDITOR_WEBHOOK_URL', 'webhooks.url'],
  ['UEDITOR_WEBHOOK_SECRET', 'webhooks.secret'],
  ['UEDITOR_WEBHOOK_TIMEOUT_MS', 'webhooks.timeoutMs'],
  ['UEDITOR_WEBHOOK_MAX_AGE_MS', 'webhooks.maxAgeMs'],
  ['UEDITOR_DOCUMENTS_ENABLED', 'documents.enabled'],
  ['UEDITOR_DOCUMENTS_PATH', 'routes.documents'],
  ['UEDITOR_DOCUMENTS_MAX_BODY_BYTES', 'documents.maxBodyBytes'],
  ['UEDITOR_DOCUMENTS_ORPHAN_GRACE', 'documents.orphanGrace'],
  ['UEDITOR_DOCUMENTS_SWEEP_INTERVAL', 'documents.sweepInterval'],
  ['UEDITOR_DOCUMENTS_IFRAME_HOSTS', 'documents.iframeHosts'],
  ['UEDITOR_DOCUMENTS_MAX_DEPTH', 'documents.maxDepth'],
  ['UEDITOR_DOCUMENTS_MAX_ELEMENTS', 'documents.maxElements'],
  ['UEDITOR_DOCUMENTS_WORKERS', 'documents.workers'],
  ['UEDITOR_DOCUMENTS_TIMEOUT_MS', 'documents.timeoutMs'],
  ['UEDITOR_DOCUMENTS_MAX_QUEUE', 'documents.maxQueue'],
]

/**
 * The variables of `lines`, each with the keys it sets and its kind, read from `schema`. A
 * path that names no key, or keys of different kinds, is a mistake in the table: it throws.
 */
export function envVarsOf(
  lines: readonly EnvLine[],
  schema: z.ZodMiniType = ServerConfigSchema,
): EnvVar[] {
  return lines.map(([name, path, override = {}]) => {
    const paths = expand(schema, path.split('.'))
    const setting = merged(
      name,
      paths.flatMap((p) => schemasAt(schema, p)),
    )
    const help = [
      `${path}${override.note ? `; ${override.note}` : ''}${formOf(setting.kind, setting.choices)}`,
      override.emptyClears ? '; set empty for none' : '',
      setting.fallback === undefined ? '' : ` (default ${setting.fallback})`,
    ].join('')
    return {
      name,
      path,
      paths,
      kind: setting.kind,
      help,
      ...(override.emptyClears ? { emptyClears: true } : {}),
    }
  })
}

/** The names of every variable the server reads, in the table's order. */
export const ENV_VAR_NAMES: readonly string[] = LINES.map(([name]) => name)

const LINE_OF = new Map(LINES.map((line) => [line[0], line]))
const READ_FROM_SCHEMA = new Map<string, EnvVar>()

/**
 * The variable `name` of the table, read from the schema the first time it is asked for: a
 * start reads only the few variables its environment sets, not all of them.
 */
export function envVarNamed(name: string): EnvVar | undefined {
  let v = READ_FROM_SCHEMA.get(name)
  const line = LINE_OF.get(name)
  if (v === undefined && line !== undefined) {
    v = envVarsOf([line])[0] as EnvVar
    READ_FROM_SCHEMA.set(name, v)
  }
  return v
}

/** The table's variables that `env` sets, in the table's order. */
export function envVarsIn(env: NodeJS.ProcessEnv): EnvVar[] {
  return ENV_VAR_NAMES.filter((name) => env[name] !== undefined).map(
    (name) => envVarNamed(name) as EnvVar,
  )
}

/** The environment's layer of the config: each variable set in `env`, read by its kind. */
export function envLayer(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const layer: Record<string, unknown> = {}
  for (const v of envVarsIn(env)) {
    const raw = env[v.name] as string
    if (raw === '' && !v.emptyClears) continue
    for (const path of v.paths) setPath(layer, path, READ[v.kind](raw))
  }
  if (env.UEDITOR_DATABASE_URL && !env.UEDITOR_INDEX_DRIVER)
    setPath(layer, ['index', 'driver'], 'postgres')
  return layer
}

/** A value that does not read as its kind is passed on as written, for the schema to refuse. */
const READ: Record<EnvKind, (raw: string) => unknown> = {
  string: (raw) => raw,
  enum: (raw) => raw,
  size: (raw) => raw,
  number: (raw) => (/^-?\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : raw),
  bool: (raw) => {
    const v = raw.trim().toLowerCase()
    return v === 'true' || v === '1' ? true : v === 'false' || v === '0' ? false : raw
  },
  list: (raw) =>
    raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
}

/** What `--help` says of a value of `kind`. */
function formOf(kind: EnvKind, choices: readonly string[]): string {
  switch (kind) {
    case 'enum':
      return `: ${choices.length > 1 ? `${choices.slice(0, -1).join(', ')} or ` : ''}${choices.at(-1)}`
    case 'number':
      return ', a number'
    case 'bool':
      return ': true or false'
    case 'size':
      return ': bytes, or a size such as 2MB'
    case 'list':
      return ', comma-separated'
    default:
      return ''
  }
}

interface Setting {
  kind: EnvKind
  choices: string[]
  fallback?: unknown
}

/** The paths `path` names: a `*` in its last part matches any letters of a key there. */
function expand(schema: z.ZodMiniType, path: readonly string[]): string[][] {
  const parent = path.slice(0, -1)
  const last = path.at(-1) ?? ''
  if (!last.includes('*')) return [[...path]]
  const pattern = new RegExp(`^${last.replaceAll('*', '[A-Za-z0-9]*')}$`)
  return knownKeysAt(schema, parent)
    .filter((key) => pattern.test(key))
    .map((key) => [...parent, key])
}

/** One setting for every schema a variable feeds: they must agree on the kind. */
function merged(name: string, schemas: z.ZodMiniType[]): Setting {
  const settings = schemas.map(settingOf)
  const [first] = settings
  if (!first) throw new Error(`${name}: its path names no config key`)
  if (settings.some((s) => s.kind !== first.kind))
    throw new Error(`${name}: its keys are of different kinds`)
  const choices = [...new Set(settings.flatMap((s) => s.choices))]
  const fallbacks = new Set(settings.map((s) => s.fallback))
  return { kind: first.kind, choices, fallback: fallbacks.size === 1 ? first.fallback : undefined }
}

/** The kind of a key's schema, its choices (an enum's) and its default when it is a scalar. */
function settingOf(schema: z.ZodMiniType): Setting {
  const def = defOf(schema)
  if (isSizeSchema(schema)) return { kind: 'size', choices: [] }
  if (def.type === 'default' && def.innerType) {
    const inner = settingOf(def.innerType)
    const scalar = ['string', 'number', 'boolean'].includes(typeof def.defaultValue)
    return scalar && def.defaultValue !== '' ? { ...inner, fallback: def.defaultValue } : inner
  }
  if (def.innerType) return settingOf(def.innerType)
  if (def.type === 'pipe' && def.in) return settingOf(def.in)
  const kind = kindOfType(def.type)
  if (!kind) throw new Error(`no environment variable reads a setting of type ${def.type}`)
  const choices = def.entries ? Object.values(def.entries) : (def.values ?? [])
  return { kind, choices: choices.map(String) }
}

function kindOfType(type: string): EnvKind | undefined {
  if (type === 'string' || type === 'enum' || type === 'number') return type
  if (type === 'literal') return 'enum'
  if (type === 'boolean') return 'bool'
  if (type === 'array') return 'list'
  return undefined
}

function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target
  for (const key of path.slice(0, -1)) {
    if (!isPlainObject(node[key])) node[key] = {}
    node = node[key] as Record<string, unknown>
  }
  node[path[path.length - 1] as string] = value
}
