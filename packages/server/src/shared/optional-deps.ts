import { createRequire } from 'node:module'
import { UeError } from './errors.js'

/**
 * The npm packages of features a site may leave out (`optionalDependencies` of the server
 * package): S3 storage, PostgreSQL, the AI relay, the formula renderer and pretty logs. Each is
 * loaded only by a server whose configuration turns its feature on, and a start (or `doctor`)
 * that needs one that is not installed says which, and what asks for it.
 */
export interface Needed {
  /** The npm package, as `npm install` takes it. */
  package: string
  /** The setting that needs it, as docs/config.md writes it. */
  setting: string
}

/** A module path inside each package that resolving proves it installed (the root may have no export). */
const PROBES: Readonly<Record<string, string>> = {
  '@mathjax/src': '@mathjax/src/js/mathjax.js',
  '@mathjax/mathjax-newcm-font': '@mathjax/mathjax-newcm-font/js/svg.js',
}

/** The settings that turn the optional features on (a `ServerConfig` is one). */
export interface Settings {
  storage: { driver: string }
  index: { driver: string }
  ai: { baseUrl?: string | undefined; apiKey?: string | undefined; model?: string | undefined }
  formula: { enabled: boolean }
  logFormat: string
  tus: { enabled: boolean }
  direct: { enabled: boolean }
}

/** The optional packages `config` needs, each with the setting that asks for it. */
export function neededPackages(config: Settings): Needed[] {
  const needed: Needed[] = []
  const add = (setting: string, ...packages: string[]) => {
    for (const name of packages) needed.push({ package: name, setting })
  }
  if (config.storage.driver === 's3') {
    add('storage.driver "s3"', '@aws-sdk/client-s3')
    if (config.tus.enabled) add('tus.enabled with S3 storage', '@tus/s3-store')
    if (config.direct.enabled)
      add(
        'direct.enabled with S3 storage',
        '@aws-sdk/s3-presigned-post',
        '@aws-sdk/s3-request-presigner',
      )
  }
  if (config.index.driver === 'postgres') add('index.driver "postgres"', 'pg')
  const { baseUrl, apiKey, model } = config.ai
  if (baseUrl !== undefined && apiKey !== undefined && model !== undefined)
    add('ai.baseUrl, ai.apiKey and ai.model', 'openai')
  if (config.formula.enabled)
    add('formula.enabled (on by default)', '@mathjax/src', '@mathjax/mathjax-newcm-font')
  if (config.logFormat === 'pretty') add('logFormat "pretty"', 'pino-pretty')
  return needed
}

/** Whether `name` (an npm package) can be found from this package, without loading it. */
export function installed(name: string): boolean {
  try {
    createRequire(import.meta.url).resolve(PROBES[name] ?? name)
    return true
  } catch (e) {
    return !notFound(e, name)
  }
}

/** The packages `config` needs that are not installed. */
export function missingPackages(config: Settings): Needed[] {
  return neededPackages(config).filter((n) => !installed(n.package))
}

/** Refuses a start whose configuration needs a package that is not installed. */
export function checkPackages(config: Settings): void {
  const missing = missingPackages(config)
  if (missing.length > 0) throw dependencyMissing(missing)
}

/**
 * `load()` (an `import()` of `name`), or a readable `UE_DEPENDENCY_MISSING` when the package
 * is not installed; any other failure of the import is passed on as it is.
 */
export async function importOptional<T>(
  name: string,
  setting: string,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load()
  } catch (e) {
    if (notFound(e, name)) throw dependencyMissing([{ package: name, setting }], e)
    throw e
  }
}

/** The refusal naming each missing package, the setting that needs it, and the command to run. */
export function dependencyMissing(missing: readonly Needed[], cause?: unknown): UeError {
  const names = [...new Set(missing.map((m) => m.package))]
  const lines = missing.map((m) => `\n  - ${m.setting} needs the npm package ${m.package}`)
  return new UeError('UE_DEPENDENCY_MISSING', {
    detail: `${lines.join('')}\n  Install it (npm install ${names.join(' ')}) or turn the setting off.`,
    cause,
  })
}

/** An import of `name` that failed because the package (or its entry file) is not there. */
function notFound(e: unknown, name: string): boolean {
  const code = (e as NodeJS.ErrnoException | undefined)?.code
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false
  return (e as Error).message.includes(`'${name}`)
}
