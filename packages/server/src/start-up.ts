import { mkdir } from 'node:fs/promises'
import { sep } from 'node:path'
import { crossOriginProblem } from './config/cross-origin.js'
import { directUploadsServed } from './config/direct-url.js'
import { unknownEditorKeys } from './config/editor-keys.js'
import { type LoadOptions, type ServerConfig, unknownVariables } from './config/load.js'
import type { ServerConfigInput } from './config/schema.js'
import { MATERIALS_MIGRATION } from './db/migrations.js'
import { openMetadataStore } from './db/open.js'
import type { MetadataStore } from './db/types.js'
import { createEvents, type Events } from './events/publisher.js'
import type { EventHandlers } from './events/types.js'
import type { FormulaHandler } from './formula/handler.js'
import { createStaticSite } from './http/static-site.js'
import { metafileOptions, withMetafiles } from './images/metafile.js'
import { type ImageProcessor, passthroughProcessor } from './images/processor.js'
import { sharpProcessor } from './images/sharp.js'
import {
  createRemoteFetcher,
  type Dialer,
  type HostLookup,
  type RemoteFetcher,
} from './ingest/remote/fetch-image.js'
import { removeStaleSpools } from './ingest/temp-file.js'
import { limitKey } from './limits/client-key.js'
import { createLimiters, type Limiters } from './limits/limiter.js'
import { seedOnFirstStart } from './materials/api.js'
import { UeError } from './shared/errors.js'
import type { MetricsRegistry } from './shared/metrics.js'
import { requestInfo } from './shared/request-info.js'
import type { FetchHandler, Logger } from './shared/types.js'
import type { StorageDriver } from './storage/driver.js'
import { localDiskStorage, removeStalePartFiles } from './storage/local.js'
import type { S3StorageOptions } from './storage/s3.js'
import type { DirectBucket } from './storage/s3-direct.js'

/** What a start opened, and the one way to close it again. */
export interface Opened {
  /** The static site folder's handler, when `site.dir` is set. */
  readonly site: FetchHandler | undefined
  readonly store: MetadataStore
  readonly storage: StorageDriver
  readonly images: ImageProcessor
  readonly remote: RemoteFetcher
  readonly formula: FormulaHandler | null
  /** The per-client limits' counts: in the index on PostgreSQL (every node), else in memory. */
  readonly limiters: Limiters
  /** How changes announce themselves: the `on` handlers, and the outbox when a webhook is set. */
  readonly events: Events
  /** The bucket's signing and multipart calls, when uploads go straight to it. */
  readonly bucket: DirectBucket | null
  /** Closes what was opened, the last first; every part is closed even when one fails. */
  close(): Promise<void>
}

/**
 * The start-up chores, in order: config warnings, the static site check, the temp folder and
 * the spools a stopped process left, the index (open, migrate, seed), the storage and its
 * unfinished writes, the image pipeline, the remote fetcher, the formula renderer. Each part
 * that must be closed is remembered as it opens; a start that fails closes them again, so it
 * leaves no database connection, pool or worker behind.
 */
export async function startUp(
  config: ServerConfig,
  o: {
    log: Logger
    metrics: MetricsRegistry
    env: NodeJS.ProcessEnv
    remote?: { lookup?: HostLookup; connect?: Dialer }
    on?: EventHandlers | undefined
  },
): Promise<Opened> {
  const { log, metrics } = o
  const closers: (() => Promise<void>)[] = []
  const close = () => closeAll(closers)
  try {
    warnAboutConfig(config, o.env, log)
    const site = config.site.dir ? await openSite(config, config.site.dir) : undefined
    await mkdir(config.uploads.tempDir, { recursive: true })
    const stale = await removeStaleSpools(config.uploads.tempDir)
    if (stale > 0) log.info({ folders: stale }, 'removed upload spools left by a stopped process')

    const opened = await openMetadataStore(config.index)
    closers.push(() => opened.close())
    const applied = await opened.migrate()
    const createdTables = applied.includes(MATERIALS_MIGRATION)
    await seedOnFirstStart({ config, repo: opened.materials, createdTables, log })
    // Only files stored from now on can become orphans: turning tracking on orphans nothing.
    if (config.documents.enabled) {
      const start = await opened.documents.startTracking()
      log.info(
        { since: new Date(start.startedAt).toISOString(), lastFileBefore: start.lastFileBefore },
        'document tracking on',
      )
    }
    const store: MetadataStore = {
      ...opened,
      files: metrics.countFailures('database', opened.files),
      materials: metrics.countFailures('database', opened.materials),
      aiUsage: metrics.countFailures('database', opened.aiUsage),
      outbox: metrics.countFailures('database', opened.outbox),
      documents: metrics.countFailures('database', opened.documents),
      uploads: metrics.countFailures('database', opened.uploads),
    }
    const events = await openEvents(config, store, { log, metrics, on: o.on }, closers)

    if (config.storage.driver === 'local') {
      const parts = await removeStalePartFiles(config.storage.root)
      if (parts > 0)
        log.info({ files: parts }, 'removed unfinished writes left by a stopped process')
    }
    const driver = await storageDriver(config.storage)
    closers.push(async () => driver.close?.())
    const storage = metrics.countFailures('storage', driver)
    const bucket =
      directUploadsServed(config) && config.storage.driver === 's3'
        ? (await import('./storage/s3-direct.js')).s3DirectBucket(s3Options(config.storage))
        : null
    if (bucket) closers.push(() => bucket.close())

    const { enabled, metafiles: _metafiles, ...imageOptions } = config.images
    const images = metrics.timeImages(
      enabled
        ? withMetafiles(await sharpProcessor(imageOptions), metafileOptions(config))
        : passthroughProcessor,
    )
    const remote = createRemoteFetcher({
      ...config.catcher,
      lookup: o.remote?.lookup,
      connect: o.remote?.connect,
    })
    closers.push(() => remote.close())
    const limiters = createLimiters(opened.limitsClient)
    const { enabled: formulaOn, path: _path, ...formulaOptions } = config.formula
    // The renderer's own modules load only when it is on; MathJax itself loads in its worker
    // threads, with the first formula.
    const formula = formulaOn
      ? (await import('./formula/handler.js')).createFormulaHandler({
          ...formulaOptions,
          locale: config.locale,
          log,
          limiters,
          clientOf: (request) => limitKey({ address: requestInfo(request)?.remoteAddress }),
        })
      : null
    if (formula) closers.push(() => formula.close())
    return { site, store, storage, images, remote, formula, limiters, events, bucket, close }
  } catch (e) {
    await close().catch(() => {})
    throw e
  }
}

/**
 * The webhook worker (when a webhook is set: it loads only then) stops before the database it
 * reads closes.
 */
async function openEvents(
  config: ServerConfig,
  store: MetadataStore,
  o: { log: Logger; metrics: MetricsRegistry; on?: EventHandlers | undefined },
  closers: (() => Promise<void>)[],
): Promise<Events> {
  const { url, secret, ...timing } = config.webhooks
  const worker =
    url !== undefined && secret !== undefined
      ? (await import('./events/webhooks.js')).startWebhookWorker({
          outbox: store.outbox,
          settings: { url, secret, ...timing },
          log: o.log,
          metrics: o.metrics,
        })
      : undefined
  if (worker) closers.push(() => worker.close())
  return createEvents({
    outbox: worker && store.outbox,
    handlers: o.on,
    log: o.log,
    metrics: o.metrics,
    wake: worker?.wake,
  })
}

async function closeAll(closers: (() => Promise<void>)[]): Promise<void> {
  let failure: unknown
  for (const closer of closers.splice(0).reverse())
    await closer().catch((e: unknown) => {
      failure ??= e
    })
  if (failure !== undefined) throw failure
}

function warnAboutConfig(config: ServerConfig, env: NodeJS.ProcessEnv, log: Logger): void {
  for (const unknown of unknownEditorKeys(config.editor, config.editorExtraKeys))
    log.warn({ key: unknown.key, suggestion: unknown.suggestion }, unknown.message)
  // The likely typos stopped loadConfig; these are names unlike any of ours.
  for (const unknown of unknownVariables(env)) log.warn({ variable: unknown.name }, unknown.message)
  const crossOrigin = crossOriginProblem(config)
  if (crossOrigin)
    log.warn({ relative: crossOrigin.relative }, `${crossOrigin.message}; ${crossOrigin.fix}`)
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

/** The config layers a start reads: code over the environment over the file. */
export function loadOptionsOf(o: {
  config?: ServerConfigInput
  configFile?: string
  env?: NodeJS.ProcessEnv
}): LoadOptions {
  const options: LoadOptions = { overrides: o.config ?? {} }
  if (o.configFile !== undefined) options.configFile = o.configFile
  if (o.env !== undefined) options.env = o.env
  return options
}

/** The configured storage driver; the S3 driver's modules load only for S3 storage. */
export async function storageDriver(c: ServerConfig['storage']): Promise<StorageDriver> {
  if (c.driver === 'local') return localDiskStorage({ root: c.root })
  return (await import('./storage/s3.js')).s3Storage(s3Options(c))
}

export function s3Options(c: Extract<ServerConfig['storage'], { driver: 's3' }>): S3StorageOptions {
  const { accessKeyId, secretAccessKey } = c
  return {
    bucket: c.bucket,
    region: c.region,
    forcePathStyle: c.forcePathStyle,
    ...(c.endpoint ? { endpoint: c.endpoint } : {}),
    ...(c.prefix ? { prefix: c.prefix } : {}),
    ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey } } : {}),
  }
}
