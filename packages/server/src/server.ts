import type { UploadRules } from './admission/rules.js'
import type { AiRelay } from './ai/relay.js'
import { type AuthSetup, createAuthenticator } from './auth/authenticator.js'
import { type ResolvedMode, resolveAuthMode } from './auth/mode.js'
import { failureThrottle } from './auth/throttle.js'
import type { AuthorizeHook } from './auth/types.js'
import { aiEnabled } from './config/ai-driver.js'
import { parseDuration } from './config/duration.js'
import { loadConfig, type ServerConfig } from './config/load.js'
import type { ServerConfigInput } from './config/schema.js'
import type { AiUsageStore } from './db/ai-usage.js'
import type { MetadataStore } from './db/types.js'
import type { ArticleBody, CleanedArticle } from './documents/clean.js'
import type { CleanPool } from './documents/clean-pool.js'
import type { DocumentHooks } from './documents/service.js'
import type { OrphanSweep } from './documents/sweep.js'
import { type ActionTable, buildActionTable, uploadRules } from './editor/action-table.js'
import { documentEventHooks, orphanEventHooks } from './events/document-events.js'
import { checkHandlers } from './events/publisher.js'
import type { EventHandlers } from './events/types.js'
import type { FormulaHandler } from './formula/handler.js'
import { createAssetServer, loaderAssets } from './http/assets.js'
import { createMetricsEndpoint } from './http/metrics-endpoint.js'
import type { Mounts } from './http/mounts.js'
import { type NodeHandler, toNodeHandler } from './http/node.js'
import { createReadiness, type ReadinessCheck } from './http/readiness.js'
import { createFileServer } from './http/static.js'
import type { Dialer, HostLookup } from './ingest/remote/fetch-image.js'
import type { Limiters } from './limits/limiter.js'
import { createMaterialsApi, type MaterialsApi } from './materials/api.js'
import {
  door,
  type Route,
  type RouteContext,
  type RouteName,
  routeTable,
  serveRoute,
} from './routes.js'
import { shuttingDown, UeError } from './shared/errors.js'
import { freeBytes } from './shared/free-space.js'
import { lazyHandler, lazyOnce } from './shared/lazy-handler.js'
import { createLogger, silentLogger } from './shared/log.js'
import { messageFor } from './shared/messages.js'
import { createMetrics, type MetricsRegistry } from './shared/metrics.js'
import { checkPackages } from './shared/optional-deps.js'
import { urlOf } from './shared/request-url.js'
import { jsonResponse } from './shared/respond.js'
import type { FetchHandler, Logger, StorageKey } from './shared/types.js'
import { loadOptionsOf, type Opened, startUp } from './start-up.js'
import type { StorageDriver } from './storage/driver.js'
import type { DirectBucket } from './storage/s3-direct.js'
import type { UploadDeps } from './uploads/finish.js'
import { startUploadSweep } from './uploads/sweep.js'
import { TUS_EXPOSED_HEADERS, TUS_REQUEST_HEADERS } from './uploads/tus/headers.js'
import { tusIdOfKey } from './uploads/tus/keys.js'
import { tusPlace } from './uploads/tus/stores.js'
import { createUnfinishedUploads, type UnfinishedUploads } from './uploads/unfinished.js'

export interface UeditorOptions {
  /** Config values, applied over the file and the environment. */
  config?: ServerConfigInput
  /** Path of a JSON config file (else `UEDITOR_CONFIG`). */
  configFile?: string
  /** Environment to read `UEDITOR_*` from; default `process.env`. Pass `{}` to ignore it. */
  env?: NodeJS.ProcessEnv
  logger?: Logger
  /**
   * Testing/advanced hook for remote image capture: `lookup` replaces DNS resolution and
   * `connect` the socket connector below the address guard. The guard still checks every
   * address `lookup` returns before `connect` is called; leave both unset in production.
   */
  remote?: { lookup?: HostLookup; connect?: Dialer }
  /**
   * The embedded auth mode: decide from the host app's own session who the request is for
   * (`{ user, admin? }`), or null for nobody (docs/auth.md).
   */
  authorize?: AuthorizeHook
  /**
   * In-process events (docs/events.md): `fileStored`, `fileDeleted`, `documentSaved`,
   * `documentDeleted`, each called with `{ id, type, timestamp, data }` once its change has
   * committed. Handlers are not awaited: one that throws or rejects is logged at error and
   * counted, and never fails or delays the request.
   */
  on?: EventHandlers
}

export interface UeditorServer {
  readonly config: ServerConfig
  /** The auth mode in force, and whether the configuration named it. */
  readonly auth: ResolvedMode
  /** The UEditor endpoint: routes on `?action=` only, so it can be mounted at any path. */
  readonly editor: FetchHandler
  /** Serves stored files under `routes.files`. */
  readonly files: FetchHandler
  /**
   * The materials API for the UEditor Plus Designer: routes on the end of the path
   * (`…/categories`, `…/materials`, `…/admin/…`), so it can be mounted at any path.
   */
  readonly materials: FetchHandler
  /**
   * The documents API (`PUT`/`GET`/`DELETE <routes.documents>/<id>`), for the host app's save
   * path; null while `documents.enabled` is off (docs/documents.md).
   */
  readonly documents: FetchHandler | null
  /**
   * The TeX formula renderer: `….svg?<URL-encoded TeX>` or `….png?…` (routes on the ending, so
   * it can be mounted at any path); `stats()` counts renders and cache hits. Null when
   * `formula.enabled` is false.
   */
  readonly formula: FormulaHandler | null
  /** `GET /metrics` in the Prometheus text format (`metrics.token` checked when set). */
  readonly metrics: FetchHandler
  /** Everything by path, as the standalone server serves it. */
  readonly fetch: FetchHandler
  /**
   * The paths `fetch` answers, the static site aside: the editor, stored files, materials, the
   * loader files, formula images, metrics and health. The one-line mounts
   * (`ueditorExpress(ue)`, …) answer these and hand every other path to the host app.
   */
  readonly mounts: Mounts
  /** `fetch` as a node:http request listener. */
  readonly node: NodeHandler
  /**
   * Starts a graceful shutdown: from now on every new request is refused with a readable
   * `UE_SHUTTING_DOWN` (and `Retry-After`); requests already running go on. `close()` after
   * they have finished.
   */
  stopAccepting(): void
  close(): Promise<void>
}

/** The composition root: config → start-up (store, storage, pools) → services → route list. */
export async function createUeditorServer(options: UeditorOptions = {}): Promise<UeditorServer> {
  const config = loadConfig(loadOptionsOf(options))
  // Before anything is opened: every optional package the settings need, named at once.
  checkPackages(config)
  return serverWithConfig(config, options)
}

/**
 * `createUeditorServer` with the config `options` make, already loaded and its packages
 * checked (the standalone server loads it before it listens).
 */
export async function serverWithConfig(
  config: ServerConfig,
  options: UeditorOptions,
): Promise<UeditorServer> {
  if (options.on) checkHandlers(options.on)
  const log =
    options.logger ??
    (config.logLevel === 'silent'
      ? silentLogger
      : createLogger({ level: config.logLevel, format: config.logFormat }))
  const metrics = createMetrics()
  const env = options.env ?? process.env
  const opened = await startUp(config, {
    log,
    metrics,
    env,
    remote: options.remote,
    on: options.on,
  })
  try {
    let stopping = false
    const s = await services(config, opened, {
      log,
      metrics,
      authorize: options.authorize,
      stopping: () => stopping,
    })
    const routes = routeList(config, opened, s)
    const context: RouteContext = {
      log,
      metrics,
      corsOrigins: config.http.corsOrigins,
      corsHeaders: config.auth.header ? [config.auth.header] : [],
      stopping: () => stopping,
    }
    const table = routeTable(routes, context)
    const entry = door(config.http)
    const route = (name: RouteName) => entry(table.served.get(name) as FetchHandler)
    // Alone, the materials API routes on the end of the path, so it can be mounted anywhere.
    const materials = { ...routeNamed(routes, 'materials'), handler: s.materials.handler() }
    const fetch = entry(table.fetch)
    const { formula } = opened
    const sweep = await orphanSweep(config, opened, log)
    return {
      config,
      auth: s.auth.mode,
      editor: route('editor'),
      files: route('files'),
      materials: entry(serveRoute(materials, context)),
      documents: s.documents ? route('documents') : null,
      formula:
        formula && Object.assign(route('formula'), { stats: formula.stats, close: formula.close }),
      metrics: route('metrics'),
      fetch,
      mounts: table.mounts,
      node: toNodeHandler(fetch),
      stopAccepting() {
        stopping = true
      },
      async close() {
        await sweep?.stop()
        await s.stopSweep()
        await s.cleaner.close()
        await opened.close()
      },
    }
  } catch (e) {
    await opened.close().catch(() => {})
    throw e
  }
}

interface Services {
  auth: AuthSetup
  editor: FetchHandler
  materials: MaterialsApi
  /** Null while `documents.enabled` is off. */
  documents: { handler: FetchHandler } | null
  /** The documents cleaner's workers (the documents API and the Word import); `close` ends them. */
  cleaner: LazyCleanPool
  /** `/healthz` and `/readyz`. */
  health: FetchHandler
  metrics: FetchHandler
  /** What each way of resumable or direct uploading keeps of its unfinished uploads. */
  unfinished: UnfinishedUploads
  /** The signing routes of direct uploads, when they are served (S3 storage). */
  direct: FetchHandler | undefined
  /** Resumable uploads, when `tus.enabled`. */
  tus: FetchHandler | undefined
  /** Stops the expiry sweep of unfinished uploads (waits for a pass that is running). */
  stopSweep(): Promise<void>
}

/**
 * The services over what start-up opened. A feature's modules load here only when the config
 * turns it on (the AI client, the documents API); the editor's actions, the upload admission and
 * resumable uploads load theirs with the first request that uses them.
 */
async function services(
  config: ServerConfig,
  opened: Opened,
  o: { log: Logger; metrics: MetricsRegistry; authorize?: AuthorizeHook; stopping(): boolean },
): Promise<Services> {
  const { store, storage } = opened
  const { log, metrics } = o
  const ai = await aiRelay(config, log, store.aiUsage, opened.limiters)
  const cleaner = lazyCleanPool(config)
  // Each way of resumable or direct uploading registers what it keeps of unfinished uploads.
  const unfinished = createUnfinishedUploads()
  const auth: AuthSetup = {
    settings: config.auth,
    mode: resolveAuthMode(config.auth, o.authorize !== undefined),
    hook: o.authorize,
    throttle: failureThrottle(opened.limiters, config.auth.failuresPerMinute),
    log,
  }
  const table = buildActionTable(config.editor, {
    deleteActionName: config.delete.enabled ? config.delete.actionName : undefined,
    aiActionName: aiEnabled(config) ? config.ai.actionName : undefined,
  })
  // Checked at start: a configuration no upload action can serve is refused.
  const rules = uploadRules(table)
  // The editor's actions, the upload admission and the Word import load with the first request
  // that needs them: the editor's, a resumable or a direct upload.
  const uploading = lazyOnce(() =>
    uploadingOver(config, opened, {
      log,
      metrics,
      auth,
      table,
      rules,
      unfinished,
      ai,
      clean: cleaner.clean,
      stopping: o.stopping,
    }),
  )
  const editor = lazyHandler(async () => (await uploading()).editor)
  let tus: FetchHandler | undefined
  if (config.tus.enabled) {
    // The tus store and server (@tus/*) load with the first resumable upload, or the first
    // sweep that has a tus upload to remove.
    const place = lazyOnce(() => tusPlace(config, storage, log))
    unfinished.register('tus', {
      remove: async (row) => (await place()).remove(row),
      ...(config.storage.driver === 's3'
        ? { idOfKey: tusIdOfKey }
        : { sweepOrphans: async () => (await place()).sweepOrphans?.() ?? 0 }),
    })
    tus = lazyHandler(async () => {
      const { createTusRoute } = await import('./uploads/tus/route.js')
      const { deps } = await uploading()
      return createTusRoute({ deps, place: await place(), path: config.routes.tus }).handler
    })
  }
  const direct = opened.bucket
    ? await directUploads(config, opened.bucket, (await uploading()).deps)
    : undefined
  const materials = createMaterialsApi({ config, repo: store.materials, log, metrics, auth })
  const documents = config.documents.enabled
    ? await documentsHandler(
        config,
        opened,
        auth,
        cleaner,
        documentEventHooks(opened.events, config.publicUrl),
      )
    : null
  // Started once nothing of the services can fail any more, so a failed start leaves no timer.
  const sweep = startUploadSweep(
    { uploads: store.uploads, unfinished, log },
    config.uploads.sweepIntervalMs,
  )
  const ready = createReadiness(readinessChecks(config, store, storage))
  const health: FetchHandler = async (request) => {
    // Liveness only, and it holds while in-flight requests finish: a database or bucket that is
    // down must not get a live process restarted. `/readyz` says the instance is leaving.
    if (urlOf(request).pathname === '/healthz') return jsonResponse({ status: 'ok' })
    if (o.stopping()) throw shuttingDown()
    return ready(request)
  }
  const metricsEndpoint = createMetricsEndpoint(metrics, config.metrics.token)
  return {
    auth,
    editor,
    materials,
    documents,
    cleaner,
    health,
    metrics: metricsEndpoint,
    unfinished,
    tus,
    direct,
    stopSweep: sweep.stop,
  }
}

/** What every way of uploading shares, and the editor's endpoint over it. */
interface Uploading {
  deps: UploadDeps
  editor: FetchHandler
}

/**
 * One admission: multipart, scrawl, catch, resumable and direct uploads pass the same checks
 * and count against the same limits.
 */
async function uploadingOver(
  config: ServerConfig,
  opened: Opened,
  o: {
    log: Logger
    metrics: MetricsRegistry
    auth: AuthSetup
    table: ActionTable
    rules: UploadRules
    unfinished: UnfinishedUploads
    ai: AiRelay | undefined
    clean: LazyCleanPool['clean']
    stopping(): boolean
  },
): Promise<Uploading> {
  const [
    { createAdmission },
    { serverUploadGate },
    { createEditorHandler },
    { uploadResultAction },
    { createWordServices },
  ] = await Promise.all([
    import('./admission/admit.js'),
    import('./admission/gate.js'),
    import('./editor/dispatch.js'),
    import('./uploads/result-action.js'),
    import('./word/services.js'),
  ])
  const { store } = opened
  const deps: UploadDeps = {
    config,
    storage: opened.storage,
    files: store.files,
    events: opened.events,
    uploads: store.uploads,
    images: opened.images,
    log: o.log,
    metrics: o.metrics,
    auth: createAuthenticator(o.auth),
    admission: createAdmission({
      config,
      files: store.files,
      uploads: store.uploads,
      gate: serverUploadGate(config, o.metrics, opened.limiters),
      metrics: o.metrics,
    }),
    rules: o.rules,
    unfinished: o.unfinished,
  }
  const editor = createEditorHandler({
    ...deps,
    table: o.table,
    remote: opened.remote,
    ai: o.ai,
    uploadResult: uploadResultAction(deps),
    word: createWordServices(config, o.clean),
    closing: o.stopping,
  })
  return { deps, editor }
}

/** One worker's heap: a 4 MiB article of the worst shapes under the limits needs about a third. */
const CLEAN_WORKER_MEMORY_MB = 512

/**
 * The article cleaner's workers, shared by the documents API and the Word import: they start with
 * the first article or import; their modules load then, or at start with the documents API on.
 */
interface LazyCleanPool {
  /** Loads the modules (with the documents API on, at start); the workers start with the first job. */
  open(): Promise<unknown>
  clean(body: ArticleBody): Promise<CleanedArticle>
  close(): Promise<void>
}

function lazyCleanPool(config: ServerConfig): LazyCleanPool {
  let pool: Promise<CleanPool> | undefined
  let closed = false
  const open = () => {
    pool ??= Promise.all([
      import('./documents/clean.js'),
      import('./documents/clean-pool.js'),
    ]).then(([{ cleanSettings }, { createCleanPool }]) => {
      const { workers, timeoutMs, maxQueue } = config.documents
      return createCleanPool({
        settings: cleanSettings(config),
        workers,
        timeoutMs,
        maxQueue,
        memoryMb: CLEAN_WORKER_MEMORY_MB,
      })
    })
    return pool
  }
  return {
    open,
    async clean(body) {
      if (closed) throw shuttingDown()
      return (await open()).clean(body)
    },
    async close() {
      closed = true
      if (pool) await (await pool).close()
    },
  }
}

/** The documents API; its modules load only when it is on. */
async function documentsHandler(
  config: ServerConfig,
  opened: Opened,
  auth: AuthSetup,
  cleaner: LazyCleanPool,
  hooks?: DocumentHooks,
): Promise<{ handler: FetchHandler }> {
  await cleaner.open()
  const [{ fileUrls }, { createDocumentsHandler }, { createDocumentService }] = await Promise.all([
    import('./documents/file-urls.js'),
    import('./documents/routes.js'),
    import('./documents/service.js'),
  ])
  const handler = createDocumentsHandler({
    service: createDocumentService({
      repo: opened.store.documents,
      clean: (body) => cleaner.clean(body),
      urls: fileUrls(config),
      hooks,
    }),
    authenticator: createAuthenticator(auth),
    basePath: config.routes.documents,
    maxBodyBytes: config.documents.maxBodyBytes,
    timeouts: config.http,
    corsOrigins: config.http.corsOrigins,
  })
  return { handler }
}

/** The periodic orphan removal, when `documents.sweepInterval` is set. */
async function orphanSweep(
  config: ServerConfig,
  opened: Opened,
  log: Logger,
): Promise<OrphanSweep | undefined> {
  const { enabled, sweepInterval, orphanGrace } = config.documents
  if (!enabled || sweepInterval === undefined) return undefined
  const { startOrphanSweep } = await import('./documents/sweep.js')
  return startOrphanSweep(
    { documents: opened.store.documents, storage: opened.storage, log },
    {
      intervalMs: parseDuration(sweepInterval) as number,
      graceMs: parseDuration(orphanGrace) as number,
      hooks: orphanEventHooks(opened.events, config.publicUrl),
    },
  )
}

/**
 * The signing routes of uploads straight to the bucket, and what they leave until they end;
 * their modules load only with S3 storage.
 */
async function directUploads(
  config: ServerConfig,
  bucket: DirectBucket,
  deps: UploadDeps,
): Promise<FetchHandler> {
  const [{ createDirectHandler }, { createDirectLedger, directUnfinished }] = await Promise.all([
    import('./uploads/direct/handler.js'),
    import('./uploads/direct/ledger.js'),
  ])
  const { expiryMs } = config.uploads
  const isLive = async (id: string) => (await deps.uploads.get(id)) !== null
  deps.unfinished.register('direct', directUnfinished(bucket, deps.storage, isLive, expiryMs))
  return createDirectHandler(
    {
      config,
      bucket,
      auth: deps.auth,
      ledger: createDirectLedger(deps),
      rules: deps.rules,
      admission: deps.admission,
    },
    config.routes.s3,
  )
}

/** Every path the server answers: one entry a route (`routes.ts` says what follows from it). */
function routeList(config: ServerConfig, opened: Opened, s: Services): Route[] {
  const { routes: at, formula: f } = config
  const { store, formula } = opened
  const materialsPrefix = `${at.materials.replace(/\/+$/, '')}/`
  const assets = config.materials.enabled ? loaderAssets(materialsPrefix) : new Map()
  const lookupType = async (key: StorageKey) => {
    const entry = await store.files.get(key)
    return entry ? { mime: entry.mime } : null
  }
  const files = createFileServer({ storage: opened.storage, basePath: `${at.files}/`, lookupType })
  return [
    {
      name: 'editor',
      match: { exact: [at.editor, `${at.editor}/`] },
      handler: s.editor,
      methods: ['GET', 'POST'],
      checksMethods: true,
      cors: true,
      whileStopping: 'handler',
    },
    { name: 'files', match: { prefix: `${at.files}/` }, handler: files, ...READ_ITSELF },
    {
      name: 'materials',
      match: { prefix: materialsPrefix },
      handler: s.materials.handler(at.materials),
      methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
      checksMethods: true,
      cors: true,
    },
    ...(s.documents
      ? [
          {
            name: 'documents',
            match: { prefix: `${at.documents.replace(/\/+$/, '')}/` },
            handler: s.documents.handler,
            methods: ['GET', 'HEAD', 'PUT', 'DELETE'],
            cors: true,
          } satisfies Route,
        ]
      : []),
    ...(s.direct
      ? [
          {
            name: 'direct' as const,
            match: { prefix: `${at.s3}/` },
            handler: s.direct,
            methods: ['GET', 'POST', 'DELETE'],
            checksMethods: true,
            cors: true,
          },
        ]
      : []),
    {
      name: 'assets',
      match: { exact: [...assets.keys()] },
      handler: createAssetServer(assets),
      ...READ,
    },
    {
      name: 'formula',
      match: { exact: formula ? [`${f.path}.svg`, `${f.path}.png`] : [] },
      handler: formula ?? notFound,
      ...READ,
    },
    {
      name: 'metrics',
      match: { exact: config.metrics.enabled ? [config.metrics.path] : [] },
      handler: s.metrics,
      ...READ,
    },
    {
      name: 'tus',
      match: s.tus ? { exact: [at.tus], prefix: `${at.tus}/` } : { exact: [] },
      handler: s.tus ?? notFound,
      methods: ['POST', 'HEAD', 'PATCH', 'DELETE', 'OPTIONS'],
      cors: true,
      corsProtocol: {
        allowHeaders: TUS_REQUEST_HEADERS,
        exposeHeaders: TUS_EXPOSED_HEADERS,
        discovery: true,
      },
    },
    {
      name: 'health',
      match: { exact: ['/healthz', '/readyz'] },
      handler: s.health,
      ...READ,
      whileStopping: 'handler',
    },
    // Every other path: the static site, else 404 whatever the method.
    opened.site
      ? { name: 'other', match: {}, handler: opened.site, ...READ }
      : { name: 'other', match: {}, handler: notFound, methods: [], checksMethods: true },
  ]
}

const READ = { methods: ['GET', 'HEAD'] } as const
/** Stored files refuse other methods themselves, with their safety headers. */
const READ_ITSELF = { ...READ, checksMethods: true } as const

const notFound: FetchHandler = async () => {
  throw new UeError('UE_NOT_FOUND')
}

function routeNamed(routes: readonly Route[], name: RouteName): Route {
  return routes.find((r) => r.name === name) as Route
}

/** What `/readyz` probes: the index, the storage, and free space where uploads are written. */
function readinessChecks(
  config: ServerConfig,
  store: MetadataStore,
  storage: StorageDriver,
): ReadinessCheck[] {
  const volumes = new Set([config.uploads.tempDir])
  if (config.storage.driver === 'local') volumes.add(config.storage.root)
  const floor = config.limits.minFreeBytes
  return [
    { name: 'database', probe: () => store.ping() },
    // Any key will do: a missing object answers null; an unreachable store throws.
    { name: 'storage', probe: async () => void (await storage.stat(READINESS_KEY)) },
    {
      name: 'disk',
      async probe() {
        for (const volume of volumes)
          if ((await freeBytes(volume)) < Math.max(floor, 1)) throw new UeError('UE_STORAGE_FULL')
      },
    },
  ]
}

const READINESS_KEY = 'readyz-probe' as StorageKey

/** The AI relay when it is configured: its modules and the `openai` package load only then. */
async function aiRelay(
  config: ServerConfig,
  log: Logger,
  usage: AiUsageStore,
  limiters: Limiters,
): Promise<AiRelay | undefined> {
  const { baseUrl, apiKey, model, models, timeoutMs, idleTimeoutMs, logPrompts } = config.ai
  if (!baseUrl || !apiKey || !model) return undefined
  const [{ openAiModelClient }, { createAiRelay }] = await Promise.all([
    import('./ai/model-client.js'),
    import('./ai/relay.js'),
  ])
  const client = await openAiModelClient({
    baseUrl,
    apiKey,
    timeoutMs,
    maxTokensParam: config.ai.maxTokensParam,
  })
  // The origin only: a base URL may carry credentials in its user part.
  log.info({ upstream: new URL(baseUrl).origin, model, models }, 'AI relay on')
  return createAiRelay({
    limiters,
    client,
    model,
    models,
    maxPromptChars: config.ai.maxPromptChars,
    maxOutputTokens: config.ai.maxOutputTokens,
    timeoutMs,
    idleTimeoutMs,
    writeTimeoutMs: config.ai.writeTimeoutMs,
    logPrompts,
    limits: config.ai,
    usage,
    bodyTimeouts: config.http,
    message: (code) => messageFor(config.locale, code),
    log,
    secret: apiKey,
  })
}
