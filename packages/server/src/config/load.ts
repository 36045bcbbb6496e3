import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { UeError } from '../shared/errors.js'
import { METAFILE_EXTS } from '../shared/metafile-header.js'
import { isPlainObject, PROTOTYPE_KEYS } from '../shared/plain-object.js'
import { convertsOffline, findSoffice, sofficeHasWriter } from '../shared/soffice-path.js'
import { pageKeyProblems, withAiDriver } from './ai-driver.js'
import { withDirectUploads } from './direct-url.js'
import { EDITOR_DEFAULTS } from './editor-defaults.js'
import { ENV_VAR_NAMES, envLayer, envVarsIn } from './env-vars.js'
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
  const merged = deepMerge(deepMerge(fromFile, envLayer(env)), options.overrides ?? {})
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
  // Parsed once or twice per process: compiling zod's fast path would cost more than it saves.
  const result = ServerConfigSchema.safeParse(merged, { jitless: true })
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
  return unknownEnvVars(env, [...ENV_VAR_NAMES, 'UEDITOR_CONFIG'])
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
      withDirectUploads(
        withAiDriver(
          withFormulaRenderer(
            withMetafileExts(
              withWordImportExts(withStoredImageExts(cfg.editor, cfg.images), cfg),
              cfg.images,
              sameList(cfg.editor.imageAllowFiles, EDITOR_DEFAULTS.imageAllowFiles),
            ),
            cfg,
          ),
          cfg,
        ),
        cfg,
      ),
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

/**
 * Word pictures are image types only where they can become PNGs: with the pipeline on and
 * LibreOffice found, the default list gains them (and the config answer says so); a list the
 * operator chose keeps the ones it names. Without a converter they are taken out of the list,
 * and an upload of one is refused as UE_CONVERTER_UNAVAILABLE.
 */
function withMetafileExts(
  editor: ParsedServerConfig['editor'],
  images: ParsedServerConfig['images'],
  defaultList: boolean,
): ParsedServerConfig['editor'] {
  if (!metafilesAvailable(images))
    return {
      ...editor,
      imageAllowFiles: editor.imageAllowFiles.filter((ext) => !METAFILE_EXTS.includes(ext)),
    }
  if (!defaultList) return editor
  const list = editor.imageAllowFiles.filter((ext) => !METAFILE_EXTS.includes(ext))
  return { ...editor, imageAllowFiles: [...list, ...METAFILE_EXTS] }
}

/**
 * `.doc` is imported through LibreOffice Writer, which fetches a document's linked pictures: it
 * is offered only with Writer found and the conversion cut off from the network (or
 * `word.docWithNetwork` set for a server that has none); otherwise only `.docx` is.
 */
function withWordImportExts(
  editor: ParsedServerConfig['editor'],
  cfg: Pick<ParsedServerConfig, 'images' | 'word'>,
): ParsedServerConfig['editor'] {
  if (docImportAvailable(cfg)) return editor
  return {
    ...editor,
    wordImportAllowFiles: editor.wordImportAllowFiles.filter((e) => e !== '.doc'),
  }
}

/** Whether `.doc` is imported: LibreOffice with Writer found, and offline or allowed online. */
export function docImportAvailable(cfg: Pick<ParsedServerConfig, 'images' | 'word'>): boolean {
  const soffice = findSoffice(cfg.images.metafiles.soffice)
  return (
    soffice !== null && sofficeHasWriter(soffice) && (convertsOffline || cfg.word.docWithNetwork)
  )
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i])
}

/** Whether Word pictures are converted: the pipeline and conversion on, LibreOffice found. */
export function metafilesAvailable(images: ParsedServerConfig['images']): boolean {
  return (
    images.enabled && images.metafiles.enabled && findSoffice(images.metafiles.soffice) !== null
  )
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
    const envVar = envVarsIn(layers.env).find(
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
  'webhooks.url',
  'webhooks.secret',
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
