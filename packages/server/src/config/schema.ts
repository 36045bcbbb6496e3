import { z } from 'zod'
import { EDITOR_DEFAULTS, EDITOR_OPTION_NAMES } from './editor-defaults.js'

const D = EDITOR_DEFAULTS

/** Extensions that browsers may execute or render as documents; refused unless opted in. */
export const ACTIVE_CONTENT_EXTS = new Set([
  '.svg',
  '.svgz',
  '.html',
  '.htm',
  '.xhtml',
  '.xht',
  '.shtml',
  '.xml',
  '.xsl',
  '.xslt',
  '.swf',
  '.js',
  '.mjs',
  '.css',
  '.php',
  '.php3',
  '.php4',
  '.php5',
  '.phtml',
  '.phar',
  '.asp',
  '.aspx',
  '.ashx',
  '.asmx',
  '.jsp',
  '.jspx',
  '.cgi',
  '.pl',
  '.py',
  '.sh',
  '.exe',
  '.dll',
  '.bat',
  '.cmd',
  '.com',
  '.scr',
  '.msi',
  '.htaccess',
  '.config',
])

const actionName = z
  .string()
  .regex(
    /^[A-Za-z][A-Za-z0-9_-]{0,63}$/,
    'must be 1-64 letters, digits, "_" or "-", starting with a letter',
  )
  .refine((v) => !EDITOR_OPTION_NAMES.has(v), {
    message: 'clashes with a UEditor option name; the browser would replace it (protocol.md §1.1)',
  })
const fieldName = z.string().regex(/^[A-Za-z0-9_.[\]-]{1,64}$/, 'must be 1-64 safe characters')
const byteSize = z.number().int().positive()
const urlPrefix = z.string().max(2048)
const align = z.enum(['none', 'left', 'right', 'center'])
const extList = z
  .array(
    z
      .string()
      .trim()
      .toLowerCase()
      .regex(/^\.[a-z0-9]{1,10}$/, 'must be a dotted extension such as ".png"'),
  )
  .transform((list) => [...new Set(list)])

const pathFormat = z
  .string()
  .max(200)
  .superRefine((v, ctx) => {
    if (v.includes('{filename}')) {
      ctx.addIssue({
        code: 'custom',
        message: '{filename} is not supported: storage keys never derive from the client name',
      })
      return
    }
    const rest = v.replace(/\{(yyyy|yy|mm|dd|hh|ii|ss|time|rand:\d{1,2})\}/g, '')
    if (/[{}]/.test(rest)) ctx.addIssue({ code: 'custom', message: 'has an unknown {placeholder}' })
    else if (!/^[A-Za-z0-9_/-]*$/.test(rest) || v.startsWith('/') || v.includes('//'))
      ctx.addIssue({
        code: 'custom',
        message: 'may only hold letters, digits, "_", "-" and inner "/"',
      })
    const rand = [...v.matchAll(/\{rand:(\d+)\}/g)].reduce((n, m) => n + Number(m[1]), 0)
    if (rand < 16)
      ctx.addIssue({
        code: 'custom',
        message: 'needs {rand:N} with N >= 16 so keys cannot be guessed',
      })
  })

export const EditorConfigSchema = z
  .object({
    imageActionName: actionName.default(D.imageActionName),
    imageFieldName: fieldName.default(D.imageFieldName),
    imageMaxSize: byteSize.default(D.imageMaxSize),
    imageAllowFiles: extList.default(D.imageAllowFiles),
    imageCompressEnable: z.boolean().default(D.imageCompressEnable),
    imageCompressBorder: z.number().int().positive().default(D.imageCompressBorder),
    imageInsertAlign: align.default('none'),
    imageUrlPrefix: urlPrefix.default(D.imageUrlPrefix),
    imagePathFormat: pathFormat.default(D.imagePathFormat),

    scrawlActionName: actionName.default(D.scrawlActionName),
    scrawlFieldName: fieldName.default(D.scrawlFieldName),
    scrawlMaxSize: byteSize.default(D.scrawlMaxSize),
    scrawlUrlPrefix: urlPrefix.default(D.scrawlUrlPrefix),
    scrawlInsertAlign: align.default('none'),
    scrawlPathFormat: pathFormat.default(D.scrawlPathFormat),

    snapscreenActionName: actionName.default(D.snapscreenActionName),
    snapscreenUrlPrefix: urlPrefix.default(D.snapscreenUrlPrefix),
    snapscreenInsertAlign: align.default('none'),
    snapscreenPathFormat: pathFormat.default(D.snapscreenPathFormat),

    catcherActionName: actionName.default(D.catcherActionName),
    catcherFieldName: fieldName.default(D.catcherFieldName),
    catcherLocalDomain: z
      .array(z.string().trim().toLowerCase().min(1))
      .default(D.catcherLocalDomain),
    catcherUrlPrefix: urlPrefix.default(D.catcherUrlPrefix),
    catcherMaxSize: byteSize.default(D.catcherMaxSize),
    catcherAllowFiles: extList.default(D.catcherAllowFiles),
    catcherPathFormat: pathFormat.default(D.catcherPathFormat),

    videoActionName: actionName.default(D.videoActionName),
    videoFieldName: fieldName.default(D.videoFieldName),
    videoUrlPrefix: urlPrefix.default(D.videoUrlPrefix),
    videoMaxSize: byteSize.default(D.videoMaxSize),
    videoAllowFiles: extList.default(D.videoAllowFiles),
    videoPathFormat: pathFormat.default(D.videoPathFormat),

    audioActionName: actionName.default(D.audioActionName),
    audioFieldName: fieldName.default(D.audioFieldName),
    audioUrlPrefix: urlPrefix.default(D.audioUrlPrefix),
    audioMaxSize: byteSize.default(D.audioMaxSize),
    audioAllowFiles: extList.default(D.audioAllowFiles),
    audioPathFormat: pathFormat.default(D.audioPathFormat),

    fileActionName: actionName.default(D.fileActionName),
    fileFieldName: fieldName.default(D.fileFieldName),
    fileUrlPrefix: urlPrefix.default(D.fileUrlPrefix),
    fileMaxSize: byteSize.default(D.fileMaxSize),
    fileAllowFiles: extList.default(D.fileAllowFiles),
    filePathFormat: pathFormat.default(D.filePathFormat),

    imageManagerActionName: actionName.default(D.imageManagerActionName),
    imageManagerListSize: z.number().int().min(1).max(100).default(D.imageManagerListSize),
    imageManagerUrlPrefix: urlPrefix.default(D.imageManagerUrlPrefix),
    imageManagerInsertAlign: align.default('none'),
    imageManagerAllowFiles: extList.default(D.imageManagerAllowFiles),

    fileManagerActionName: actionName.default(D.fileManagerActionName),
    fileManagerUrlPrefix: urlPrefix.default(D.fileManagerUrlPrefix),
    fileManagerListSize: z.number().int().min(1).max(100).default(D.fileManagerListSize),
    fileManagerAllowFiles: extList.default(D.fileManagerAllowFiles),

    formulaConfig: z
      .looseObject({
        imageUrlTemplate: z.string().includes('{}').default(D.formulaConfig.imageUrlTemplate),
        editorMode: z.enum(['live', 'plain']).default('live'),
        editorLiveServer: z.string().default(D.formulaConfig.editorLiveServer),
      })
      .prefault({}),
    toolbarShows: z.record(z.string(), z.boolean()).default({}),
    shortcutMenuShows: z.record(z.string(), z.boolean()).default({}),
  })
  // Other UEditor options (imageConfig, custom keys…) are forwarded verbatim to the browser.
  .catchall(z.unknown())

export type EditorConfig = z.infer<typeof EditorConfigSchema>

const bearerToken = z
  .string()
  .min(16)
  .max(512)
  .regex(/^[A-Za-z0-9._~+/-]+=*$/, 'must be a Bearer token: letters, digits and -._~+/ only')
const absolutePath = z.string().regex(/^\/[A-Za-z0-9._~/-]*$/, 'must be an absolute URL path')

export const ServerConfigSchema = z.strictObject({
  dataDir: z.string().min(1).default('./data'),
  locale: z.enum(['zh-CN', 'en']).default('zh-CN'),
  logLevel: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  editor: EditorConfigSchema.prefault({}),
  /** Keys in `editor` the server does not know but that are deliberate (no warning at start). */
  editorExtraKeys: z.array(z.string().min(1)).default([]),
  routes: z
    .strictObject({
      editor: absolutePath.default('/ueditor'),
      files: absolutePath.default('/uploads'),
      materials: absolutePath.default('/materials'),
    })
    .refine((r) => new Set([r.editor, r.files, r.materials]).size === 3, {
      message: 'editor, files and materials need distinct paths',
    })
    .prefault({}),
  /** Base URL put in front of storage keys in results, e.g. a CDN. Default: routes.files + '/'. */
  publicUrl: z.string().max(2048).optional(),
  storage: z
    .discriminatedUnion('driver', [
      z.strictObject({ driver: z.literal('local'), root: z.string().min(1).optional() }),
      z
        .strictObject({
          driver: z.literal('s3'),
          bucket: z.string().min(3).max(255),
          region: z.string().min(1).default('us-east-1'),
          /** S3-compatible endpoint (MinIO, R2, …); AWS when absent. */
          endpoint: z.url({ protocol: /^https?$/ }).optional(),
          forcePathStyle: z.boolean().default(false),
          // Secrets: messages name the key, never the value. Absent: the SDK's default chain.
          accessKeyId: z.string().min(1).optional(),
          secretAccessKey: z.string().min(1).optional(),
          prefix: z
            .string()
            .max(512)
            .regex(/^([A-Za-z0-9_.-]+\/?)*$/, 'must be folder names separated by "/"')
            .refine((p) => !p.split('/').some((s) => s === '.' || s === '..'), {
              message: 'may not contain "." or ".." folders',
            })
            .optional(),
        })
        .refine((s) => (s.accessKeyId === undefined) === (s.secretAccessKey === undefined), {
          message: 'accessKeyId and secretAccessKey must be set together',
        }),
    ])
    .prefault({ driver: 'local' }),
  index: z
    .discriminatedUnion('driver', [
      z.strictObject({
        driver: z.literal('sqlite'),
        file: z.string().min(1).optional(),
        /** 'auto': Node's built-in node:sqlite where it exists (22.13+), else better-sqlite3. */
        engine: z.enum(['auto', 'node:sqlite', 'better-sqlite3']).optional(),
      }),
      z.strictObject({
        driver: z.literal('postgres'),
        // The URL may carry a password: messages name the key, never the value.
        url: z
          .string()
          .max(4096)
          .regex(/^postgres(ql)?:\/\/\S+$/i, 'must be a postgres:// or postgresql:// URL'),
        poolSize: z.number().int().min(1).max(1000).default(10),
      }),
    ])
    .prefault({ driver: 'sqlite' }),
  http: z
    .strictObject({
      host: z.string().min(1).default('127.0.0.1'),
      port: z.number().int().min(0).max(65535).default(8080),
      corsOrigins: z
        .array(
          z.string().regex(/^https?:\/\/[^/\s]+$/, 'must be an origin such as https://a.example'),
        )
        .default([]),
      /** Action kinds that answer JSONP when `callback` is present. */
      jsonpActions: z.array(z.enum(['config', 'list', 'catch'])).default(['config', 'list']),
      /** 'protocol': HTTP 200 + readable state (what UEditor expects); 'http': real status codes. */
      errorStatus: z.enum(['protocol', 'http']).default('protocol'),
      headersTimeoutMs: z.number().int().positive().default(30_000),
      /** An upload body that sends nothing for this long is aborted (slow-body guard). */
      bodyIdleTimeoutMs: z.number().int().positive().default(30_000),
      /** Time given to in-flight requests on SIGTERM before the server closes anyway. */
      shutdownGraceMs: z.number().int().min(0).default(30_000),
    })
    .prefault({}),
  /** A folder of static files (the editor's files, the site's page) served at `/`. */
  site: z
    .strictObject({
      dir: z.string().min(1).optional(),
      /** File served for a folder URL (`/`, `/docs/`). */
      index: z
        .string()
        .regex(/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/, 'must be a file name')
        .default('index.html'),
    })
    .prefault({}),
  uploads: z
    .strictObject({
      /** Temp spool folder; default `<dataDir>/tmp` so it sits on the storage volume. */
      tempDir: z.string().min(1).optional(),
      /** Extra form fields allowed next to the file (WebUploader sends five). */
      maxFields: z.number().int().min(0).default(20),
    })
    .prefault({}),
  /** Remote image capture (`catch`): only public addresses unless a host is listed here. */
  catcher: z
    .strictObject({
      /** Exact hosts or host:port fetched even when not public (intranet image servers). */
      allowHosts: z
        .array(
          z
            .string()
            .trim()
            .toLowerCase()
            .regex(
              /^(\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(:\d{1,5})?$/,
              'must be a host or host:port such as 127.0.0.1:18090',
            ),
        )
        .default([]),
      connectTimeoutMs: z.number().int().positive().default(5_000),
      /** One source, redirects and body included; the editor itself gives up after 60 s. */
      timeoutMs: z.number().int().positive().max(55_000).default(15_000),
      /** All sources of one request; later sources fail once it has passed. */
      requestTimeoutMs: z.number().int().positive().max(55_000).default(45_000),
      maxRedirects: z.number().int().min(0).max(10).default(3),
      maxSources: z.number().int().min(1).max(100).default(20),
      concurrency: z.number().int().min(1).max(16).default(3),
      userAgent: z
        .string()
        .max(256)
        .regex(/^[\x20-\x7e]*$/, 'must be printable ASCII')
        .default('Mozilla/5.0 (compatible; ueditor-backend)'),
      referer: z.enum(['none', 'origin']).default('none'),
    })
    .prefault({}),
  security: z
    .strictObject({
      /** Opt-in: allow SVG/HTML/XML and similar in allow-lists (served as sandboxed attachments). */
      allowActiveContent: z.boolean().default(false),
    })
    .prefault({}),
  /** Server-side image pipeline: header checks, auto-orientation, re-encoding (security.md A33). */
  images: z
    .strictObject({
      enabled: z.boolean().default(true),
      maxPixels: z.number().int().positive().default(50_000_000),
      maxFrames: z.number().int().positive().default(1000),
      keepMetadata: z.boolean().default(false),
      format: z.enum(['keep', 'webp']).default('keep'),
      quality: z.number().int().min(1).max(100).default(85),
      concurrency: z.number().int().min(1).max(64).default(2),
      timeoutSeconds: z.number().int().positive().default(30),
      watermark: z
        .strictObject({
          file: z.string().min(1),
          position: z
            .enum([
              'north',
              'northeast',
              'east',
              'southeast',
              'south',
              'southwest',
              'west',
              'northwest',
              'center',
            ])
            .default('southeast'),
          opacity: z.number().min(0).max(1).default(0.5),
          margin: z.number().int().min(0).max(10_000).default(16),
        })
        .optional(),
    })
    .prefault({}),
  /** The materials service behind the UEditor Plus Designer (docs/materials.md). */
  materials: z
    .strictObject({
      enabled: z.boolean().default(true),
      /** Bearer tokens allowed to read; none: reads are public while `http.host` is loopback. */
      tokens: z.array(bearerToken).default([]),
      /** Bearer tokens allowed to write (and read); none: the admin routes are closed. */
      adminTokens: z.array(bearerToken).default([]),
      /** Load the demo materials when the materials tables are first created. */
      seed: z.boolean().default(true),
      /** Largest JSON request body. */
      maxBodyBytes: z.number().int().min(1024).max(16_777_216).default(262_144),
    })
    .prefault({}),
  /** Upload flood guards (security.md A36), per client address. */
  limits: z
    .strictObject({
      /** Uploads a client may start per minute (a burst of this many, refilled evenly). 0: off. */
      uploadsPerMinute: z.number().int().min(0).default(120),
      /** Uploads one client may have in flight at once. 0: off. */
      concurrentUploads: z.number().int().min(0).default(16),
      /** Refuse uploads when the storage volume has less free space than this. 0: off. */
      minFreeBytes: z.number().int().min(0).default(134_217_728),
    })
    .prefault({}),
})

export type ServerConfigInput = z.input<typeof ServerConfigSchema>
export type ParsedServerConfig = z.infer<typeof ServerConfigSchema>
