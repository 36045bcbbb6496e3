import { mkdir } from 'node:fs/promises'
import { sep } from 'node:path'
import { openAiModelClient } from './ai/model-client.js'
import { type AiRelay, createAiRelay } from './ai/relay.js'
import { type AuthSetup, createAuthenticator } from './auth/authenticator.js'
import { clientKey } from './auth/client-key.js'
import { type ResolvedMode, resolveAuthMode } from './auth/mode.js'
import { failureThrottle } from './auth/throttle.js'
import type { AuthorizeHook } from './auth/types.js'
import { aiEnabled } from './config/ai-driver.js'
import { crossOriginProblem } from './config/cross-origin.js'
import { unknownEditorKeys } from './config/editor-keys.js'
import { type LoadOptions, loadConfig, type ServerConfig, unknownVariables } from './config/load.js'
import type { ServerConfigInput } from './config/schema.js'
import type { AiUsageStore } from './db/ai-usage.js'
import { MATERIALS_MIGRATION } from './db/migrations.js'
import { openMetadataStore } from './db/open.js'
import type { MetadataStore } from './db/types.js'
import { buildActionTable } from './editor/action-table.js'
import { createEditorHandler, SHUTDOWN_RETRY_AFTER } from './editor/dispatch.js'
import { createFormulaHandler, type FormulaHandler } from './formula/handler.js'
import { createAssetServer, loaderAssets } from './http/assets.js'
import { clientAddress, parseTrustedProxies } from './http/client-address.js'
import { withCors } from './http/cors.js'
import { answerFor } from './http/lazy-request.js'
import { createMetricsEndpoint } from './http/metrics-endpoint.js'
import type { Mounts } from './http/mounts.js'
import { type NodeHandler, toNodeHandler } from './http/node.js'
import { observe } from './http/observe.js'
import { createReadiness, type ReadinessCheck } from './http/readiness.js'
import { type DrainLimits, withDrainLimits } from './http/request-body-node.js'
import { createFileServer } from './http/static.js'
import { createStaticSite } from './http/static-site.js'
import { type ImageProcessor, passthroughProcessor } from './images/processor.js'
import { sharpProcessor } from './images/sharp.js'
import { createRemoteFetcher, type Dialer, type HostLookup } from './ingest/remote/fetch-image.js'
import { removeStaleSpools } from './ingest/temp-file.js'
import { createMaterialsApi, seedOnFirstStart } from './materials/api.js'
import { UeError } from './shared/errors.js'
import { freeBytes } from './shared/free-space.js'
import { createLogger, requestLogger, silentLogger } from './shared/log.js'
import { messageFor } from './shared/messages.js'
import { createMetrics } from './shared/metrics.js'
import { requestInfo, setRequestInfo } from './shared/request-info.js'
import { urlOf } from './shared/request-url.js'
import { errorResponse, jsonResponse } from './shared/respond.js'
import type { FetchHandler, Logger, StorageKey } from './shared/types.js'
import type { StorageDriver } from './storage/driver.js'
import { localDiskStorage, removeStalePartFiles } from './storage/local.js'
import { s3Storage } from './storage/s3.js'

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

/** The composition root: config → drivers → services → product handlers. */
export async function createUeditorServer(options: UeditorOptions = {}): Promise<UeditorServer> {
  const loadOptions: LoadOptions = { overrides: options.config ?? {} }
  if (options.configFile !== undefined) loadOptions.configFile = options.configFile
  if (options.env !== undefined) loadOptions.env = options.env
  const config = loadConfig(loadOptions)
  const log =
    options.logger ??
    (config.logLevel === 'silent'
      ? silentLogger
      : createLogger({ level: config.logLevel, format: config.logFormat }))
  const metrics = createMetrics()
  const table = buildActionTable(config.editor, {
    deleteActionName: config.delete.enabled ? config.delete.actionName : undefined,
    aiActionName: aiEnabled(config) ? config.ai.actionName : undefined,
  })
  for (const unknown of unknownEditorKeys(config.editor, config.editorExtraKeys))
    log.warn({ key: unknown.key, suggestion: unknown.suggestion }, unknown.message)
  // The likely typos stopped loadConfig; these are names unlike any of ours.
  for (const unknown of unknownVariables(options.env ?? process.env))
    log.warn({ variable: unknown.name }, unknown.message)
  const crossOrigin = crossOriginProblem(config)
  if (crossOrigin)
    log.warn({ relative: crossOrigin.relative }, `${crossOrigin.message}; ${crossOrigin.fix}`)
  const authSetup: AuthSetup = {
    settings: config.auth,
    mode: resolveAuthMode(config.auth, options.authorize !== undefined),
    hook: options.authorize,
    throttle: failureThrottle(config.auth.failuresPerMinute),
    log,
  }

  const site = config.site.dir ? await openSite(config, config.site.dir) : undefined
  await mkdir(config.uploads.tempDir, { recursive: true })
  const stale = await removeStaleSpools(config.uploads.tempDir)
  if (stale > 0) log.info({ folders: stale }, 'removed upload spools left by a stopped process')
  const { enabled, ...imageOptions } = config.images
  const images: ImageProcessor = metrics.timeImages(
    enabled ? await sharpProcessor(imageOptions) : passthroughProcessor,
  )
  if (config.storage.driver === 'local') {
    const parts = await removeStalePartFiles(config.storage.root)
    if (parts > 0) log.info({ files: parts }, 'removed unfinished writes left by a stopped process')
  }
  const storage = metrics.countFailures('storage', storageDriver(config.storage))
  const opened: MetadataStore = await openMetadataStore(config.index)
  const store: MetadataStore = {
    ...opened,
    files: metrics.countFailures('database', opened.files),
    materials: metrics.countFailures('database', opened.materials),
    aiUsage: metrics.countFailures('database', opened.aiUsage),
  }
  try {
    const applied = await store.migrate()
    const createdTables = applied.includes(MATERIALS_MIGRATION)
    await seedOnFirstStart({ config, repo: store.materials, createdTables, log })
  } catch (e) {
    await store.close()
    throw e
  }

  const remote = createRemoteFetcher({
    ...config.catcher,
    lookup: options.remote?.lookup,
    connect: options.remote?.connect,
  })

  const authHeaders = config.auth.header ? [config.auth.header] : []
  const cors = (h: FetchHandler) =>
    withCors(h, config.http.corsOrigins, 'GET, POST, OPTIONS', authHeaders)
  const auth = createAuthenticator(authSetup)
  let closing = false
  const editor = cors(
    createEditorHandler({
      config,
      table,
      storage,
      files: store.files,
      images,
      remote,
      log,
      metrics,
      auth,
      ai: aiRelay(config, log, store.aiUsage),
      closing: () => closing,
    }),
  )
  const materialsApi = createMaterialsApi({
    config,
    repo: store.materials,
    log,
    metrics,
    auth: authSetup,
  })
  const materialsMethods = 'GET, POST, PUT, PATCH, DELETE, OPTIONS'
  const materials = withCors(
    materialsApi.handler(),
    config.http.corsOrigins,
    materialsMethods,
    authHeaders,
  )
  const mountedMaterials = withCors(
    materialsApi.handler(config.routes.materials),
    config.http.corsOrigins,
    materialsMethods,
    authHeaders,
  )
  const files = createFileServer({
    storage,
    basePath: `${config.routes.files}/`,
    lookupType: async (key) => {
      const entry = await store.files.get(key)
      return entry ? { mime: entry.mime } : null
    },
  })
  // Liveness only: a database or bucket that is down must not get a live process restarted.
  const health: FetchHandler = async () => jsonResponse({ status: 'ok' })
  const ready = createReadiness(readinessChecks(config, store, storage))

  const { enabled: formulaOn, path: formulaPath, ...formulaOptions } = config.formula
  const formula = formulaOn
    ? createFormulaHandler({
        ...formulaOptions,
        locale: config.locale,
        log,
        clientOf: (request) => {
          const address = requestInfo(request)?.remoteAddress
          return address ? clientKey(address) : undefined
        },
      })
    : null

  const editorPath = config.routes.editor
  const filesPrefix = `${config.routes.files}/`
  const materialsPrefix = `${config.routes.materials.replace(/\/+$/, '')}/`
  const assetMap = config.materials.enabled ? loaderAssets(materialsPrefix) : new Map()
  const assets = createAssetServer(assetMap)
  const metricsPath = config.metrics.enabled ? config.metrics.path : undefined
  const metricsEndpoint = createMetricsEndpoint(metrics, config.metrics.token)
  const mounts: Mounts = {
    exact: [
      editorPath,
      `${editorPath}/`,
      '/healthz',
      '/readyz',
      ...assetMap.keys(),
      ...(metricsPath ? [metricsPath] : []),
      ...(formula ? [`${formulaPath}.svg`, `${formulaPath}.png`] : []),
    ],
    prefixes: [filesPrefix, materialsPrefix],
  }
  const isFormula = (pathname: string) =>
    formula !== null && (pathname === `${formulaPath}.svg` || pathname === `${formulaPath}.png`)
  const routeOf = (pathname: string): string => {
    if (pathname === metricsPath) return 'metrics'
    if (assetMap.has(pathname)) return 'assets'
    if (pathname === editorPath || pathname === `${editorPath}/`) return 'editor'
    if (pathname.startsWith(filesPrefix)) return 'files'
    if (pathname === '/healthz' || pathname === '/readyz') return 'health'
    if (isFormula(pathname)) return 'formula'
    if (pathname.startsWith(materialsPrefix)) return 'materials'
    return 'other'
  }
  const observed = (h: FetchHandler, route?: string) =>
    observe(h, {
      log,
      metrics,
      routeOf: route ? () => route : routeOf,
      quietRoutes: new Set(['health', 'metrics']),
    })
  const fetch: FetchHandler = async (request) => {
    const { pathname } = urlOf(request)
    try {
      // Liveness holds while in-flight requests finish; `/readyz` says the instance is leaving.
      if (closing && routeOf(pathname) !== 'editor' && pathname !== '/healthz')
        return shuttingDown()
      if (pathname === metricsPath) return await metricsEndpoint(request)
      if (assetMap.has(pathname)) return await assets(request)
      if (pathname === editorPath || pathname === `${editorPath}/`) return await editor(request)
      if (pathname.startsWith(filesPrefix)) return await files(request)
      if (pathname === '/healthz') return await health(request)
      if (pathname === '/readyz') return await ready(request)
      if (formula && isFormula(pathname)) return await formula(request)
      if (pathname.startsWith(materialsPrefix)) return await mountedMaterials(request)
      if (site) return await site(request)
      return errorResponse(new UeError('UE_NOT_FOUND'))
    } catch (err) {
      requestLogger(log, request).error({ err, path: pathname }, 'unhandled error')
      return errorResponse(new UeError('UE_INTERNAL', { cause: err }))
    }
  }

  // What an adapter hands over beside the request becomes the request's info, once, at the door.
  const proxies = parseTrustedProxies(config.http.trustProxy)
  const drainLimits: DrainLimits = {
    maxBytes: config.http.drainMaxBytes,
    timeoutMs: config.http.drainTimeoutMs,
    idleMs: config.http.bodyIdleTimeoutMs,
  }
  const entry = (h: FetchHandler): FetchHandler =>
    withDrainLimits((request, info) => {
      if (info)
        setRequestInfo(request, {
          remoteAddress: clientAddress(
            info.remoteAddress,
            request.headers.get('x-forwarded-for'),
            proxies,
          ),
          host: info.host,
        })
      return answerFor(request, h(request))
    }, drainLimits)
  const everything = entry(observed(fetch))
  // During a shutdown the editor refuses in its own protocol shape, the others with this.
  const whileOpen =
    (h: FetchHandler): FetchHandler =>
    async (request) =>
      closing ? shuttingDown() : h(request)

  let closed = false
  return {
    config,
    auth: authSetup.mode,
    editor: entry(observed(editor, 'editor')),
    files: entry(observed(whileOpen(files), 'files')),
    materials: entry(observed(whileOpen(materials), 'materials')),
    formula:
      formula &&
      Object.assign(entry(observed(whileOpen(formula), 'formula')), {
        stats: formula.stats,
        close: formula.close,
      }),
    metrics: entry(observed(whileOpen(metricsEndpoint), 'metrics')),
    fetch: everything,
    mounts,
    node: toNodeHandler(everything),
    stopAccepting() {
      closing = true
    },
    async close() {
      if (closed) return
      closed = true
      await formula?.close()
      await remote.close()
      await store.close()
      await storage.close?.()
    },
  }
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

/** The refusal of a request that arrives during a graceful shutdown, outside the editor. */
function shuttingDown(): Response {
  return errorResponse(new UeError('UE_SHUTTING_DOWN'), {
    headers: { 'Retry-After': SHUTDOWN_RETRY_AFTER },
  })
}

function aiRelay(config: ServerConfig, log: Logger, usage: AiUsageStore): AiRelay | undefined {
  const { baseUrl, apiKey, model, models, timeoutMs, idleTimeoutMs, logPrompts } = config.ai
  if (!baseUrl || !apiKey || !model) return undefined
  // The origin only: a base URL may carry credentials in its user part.
  log.info({ upstream: new URL(baseUrl).origin, model, models }, 'AI relay on')
  return createAiRelay({
    client: openAiModelClient({
      baseUrl,
      apiKey,
      timeoutMs,
      maxTokensParam: config.ai.maxTokensParam,
    }),
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

/** The static site folder; never the data folder or a folder inside it. */
async function openSite(config: ServerConfig, dir: string): Promise<FetchHandler> {
  const invalid = (why: string) =>
    new UeError('UE_CONFIG_INVALID', { detail: `\n  - site.dir (${dir}): ${why}` })
  if (dir === config.dataDir || dir.startsWith(`${config.dataDir}${sep}`))
    throw invalid('is the data folder or inside it; serve a folder of its own')
  const exclude = [config.dataDir, config.uploads.tempDir]
  if (config.storage.driver === 'local') exclude.push(config.storage.root)
  if (config.index.driver === 'sqlite') exclude.push(config.index.file)
  try {
    return await createStaticSite({ root: dir, index: config.site.index, exclude })
  } catch (e) {
    throw invalid(
      (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'folder not found' : (e as Error).message,
    )
  }
}

export function storageDriver(c: ServerConfig['storage']): StorageDriver {
  if (c.driver === 'local') return localDiskStorage({ root: c.root })
  const { accessKeyId, secretAccessKey } = c
  return s3Storage({
    bucket: c.bucket,
    region: c.region,
    forcePathStyle: c.forcePathStyle,
    ...(c.endpoint ? { endpoint: c.endpoint } : {}),
    ...(c.prefix ? { prefix: c.prefix } : {}),
    ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey } } : {}),
  })
}
