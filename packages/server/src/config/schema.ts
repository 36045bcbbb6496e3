import ipaddr from 'ipaddr.js'
import { z } from '#zod'
import { parseByteSize, SIZE_FORMS } from './byte-size.js'
import { DURATION_FORMS, isDuration } from './duration.js'
import { EDITOR_DEFAULTS, EDITOR_OPTION_NAMES } from './editor-defaults.js'
import { USER_ID } from './user-id.js'

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
    message:
      'clashes with a UEditor option name; the editor looks action names up as options first and would replace it',
  })
const fieldName = z.string().regex(/^[A-Za-z0-9_.[\]-]{1,64}$/, 'must be 1-64 safe characters')
const SIZES = new WeakSet<z.ZodType>()
/** True for the schema of a size setting, which reads `2MB` itself (see `size`). */
export const isSizeSchema = (schema: z.ZodType) => SIZES.has(schema)
/** A byte count, as bytes or with a unit (`2MB`, `512KB`, `1.5GiB`), checked against `bounds`. */
function size(bounds: z.ZodNumber = z.number().int().min(0)) {
  const schema = z
    .custom<number | string>()
    .transform((value, ctx) => {
      const bytes = parseByteSize(value)
      if (bytes !== undefined) return bytes
      ctx.addIssue({ code: 'custom', message: SIZE_FORMS })
      return z.NEVER
    })
    .pipe(bounds)
  SIZES.add(schema)
  return schema
}
const byteSize = size(z.number().int().positive())
/** A duration as text: `7d`, `12h`, `30m`, `90s` or seconds (`3600`); read with parseDuration. */
const duration = z.string().refine(isDuration, { message: DURATION_FORMS })
/** A lower-case host name (no port, no scheme): `player.bilibili.com`. */
const hostName = z
  .string()
  .trim()
  .toLowerCase()
  .regex(
    /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/,
    'must be a host name such as player.example.com',
  )
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

    wordImportActionName: actionName.default(D.wordImportActionName),
    wordImportFieldName: fieldName.default(D.wordImportFieldName),
    wordImportMaxSize: byteSize.default(D.wordImportMaxSize),
    wordImportAllowFiles: z
      .array(z.enum(['.docx', '.doc']))
      .transform((list) => [...new Set(list)])
      .default(D.wordImportAllowFiles),

    imageManagerActionName: actionName.default(D.imageManagerActionName),
    imageManagerListSize: z.number().int().min(1).max(100).default(D.imageManagerListSize),
    imageManagerUrlPrefix: urlPrefix.default(D.imageManagerUrlPrefix),
    imageManagerInsertAlign: align.default('none'),
    imageManagerAllowFiles: extList.default(D.imageManagerAllowFiles),

    fileManagerActionName: actionName.default(D.fileManagerActionName),
    fileManagerUrlPrefix: urlPrefix.default(D.fileManagerUrlPrefix),
    fileManagerListSize: z.number().int().min(1).max(100).default(D.fileManagerListSize),
    fileManagerAllowFiles: extList.default(D.fileManagerAllowFiles),

    // Only what is set here (or the renderer's URL, see formula.enabled) reaches the browser,
    // so the page's own formulaConfig keeps every key the server leaves alone.
    formulaConfig: z
      .looseObject({
        imageUrlTemplate: z.string().max(2048).includes('{}').optional(),
        editorMode: z.enum(['live', 'plain']).optional(),
        editorLiveServer: z.string().max(2048).optional(),
      })
      .optional(),
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

const userId = z.string().regex(USER_ID, 'must be 1-128 letters, digits or _.@|-')
/** `user:token` (UEDITOR_AUTH_TOKENS="alice:…,bob:…"); the message never repeats the value. */
const userToken = z
  .string()
  .regex(
    /^[A-Za-z0-9_.@|-]{1,128}:[A-Za-z0-9._~+/-]{16,512}=*$/,
    'must be user:token, the token 16-512 characters of letters, digits and -._~+/',
  )
const modelName = z
  .string()
  .regex(/^[\w.:/@+-]{1,200}$/, 'must be a model name such as gpt-4o-mini')
const headerName = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9-]{0,63}$/, 'must be an HTTP header name such as X-Token')
const JWT_ALGORITHMS = [
  'HS256',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const

const AuthConfigSchema = z
  .strictObject({
    /** Absent: chosen from what is configured (hook, JWT, tokens), else `none`. */
    mode: z.enum(['none', 'tokens', 'jwt', 'hook']).optional(),
    tokens: z.array(userToken).default([]),
    /** Users (static tokens) who may see and delete every file and write materials. */
    adminUsers: z.array(userId).default([]),
    jwt: z
      .strictObject({
        /** HS256 shared secret (a secret: messages name the key, never the value). */
        secret: z.string().min(32, 'must be at least 32 characters').optional(),
        jwksUrl: z.url({ protocol: /^https?$/ }).optional(),
        /** Pinned; default HS256 with a secret, RS256 and ES256 with a JWKS. */
        algorithms: z.array(z.enum(JWT_ALGORITHMS)).min(1).optional(),
        issuer: z.string().min(1).optional(),
        audience: z.string().min(1).optional(),
        /** A claim that grants admin when it is `true`, `"admin"`, or a list holding "admin". */
        adminClaim: z.string().min(1).default('ueditor_admin'),
        clockToleranceSeconds: z.number().int().min(0).max(300).default(30),
      })
      .refine((j) => !(j.secret !== undefined && j.jwksUrl !== undefined), {
        message: 'set either secret or jwksUrl, not both',
      })
      .prefault({}),
    /** A second header the token may come in (raw or as `Bearer …`), e.g. X-Token. */
    header: headerName.optional(),
    /** A query parameter the token may come in (the only channel JSONP can use). Off: absent. */
    queryParam: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/, 'must be a query parameter name such as token')
      .refine((v) => !['action', 'callback', 'start', 'size'].includes(v), {
        message: 'clashes with a parameter the editor sends',
      })
      .optional(),
    /** `config` answers without a credential (it holds nothing private). */
    publicConfig: z.boolean().default(true),
    /** Listings show every user's files (those with an owner), not only the caller's. */
    sharedLibrary: z.boolean().default(false),
    /** With the authorize hook (cookies), JSONP listings and JSONP catch are refused unless set. */
    hookJsonp: z.boolean().default(false),
    /** Failed credentials one client address may present per minute before it is throttled. */
    failuresPerMinute: z.number().int().min(0).default(30),
  })
  .superRefine((a, ctx) => {
    if (a.mode === 'tokens' && a.tokens.length === 0)
      ctx.addIssue({ code: 'custom', message: 'mode tokens needs auth.tokens' })
    const jwt = a.jwt.secret !== undefined || a.jwt.jwksUrl !== undefined
    if (a.mode === 'jwt' && !jwt)
      ctx.addIssue({
        code: 'custom',
        message: 'mode jwt needs auth.jwt.secret or auth.jwt.jwksUrl',
      })
    if (jwt && a.jwt.audience === undefined && (a.mode === undefined || a.mode === 'jwt'))
      ctx.addIssue({
        code: 'custom',
        path: ['jwt', 'audience'],
        message: 'is required with JWTs, so a token minted for another service is refused',
      })
  })
  .prefault({})

export const ServerConfigSchema = z.strictObject({
  dataDir: z.string().min(1).default('./data'),
  locale: z.enum(['zh-CN', 'en']).default('zh-CN'),
  logLevel: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  /** `auto`: pino-pretty lines when stderr is a terminal, JSON lines otherwise. */
  logFormat: z.enum(['auto', 'json', 'pretty']).default('auto'),
  /** Prometheus metrics (docs/operations.md). */
  metrics: z
    .strictObject({
      enabled: z.boolean().default(true),
      path: absolutePath.default('/metrics'),
      /** Bearer token a scraper must send; none: the metrics path is open. */
      token: bearerToken.optional(),
    })
    .prefault({}),
  editor: EditorConfigSchema.prefault({}),
  /** Keys in `editor` the server does not know but that are deliberate (no warning at start). */
  editorExtraKeys: z.array(z.string().min(1)).default([]),
  routes: z
    .strictObject({
      editor: absolutePath.default('/ueditor'),
      files: absolutePath.default('/uploads'),
      materials: absolutePath.default('/materials'),
      documents: absolutePath.default('/documents'),
      /** Where `@uppy/aws-s3`'s signing calls arrive (`<s3>/s3/params`, …); S3 storage only. */
      s3: absolutePath.default('/s3'),
      /** Resumable uploads (tus 1.0): `POST` here, then `HEAD`/`PATCH`/`DELETE` `<tus>/<id>`. */
      tus: absolutePath.default('/tus'),
    })
    .refine((r) => new Set([r.editor, r.files, r.materials, r.documents, r.s3, r.tus]).size === 6, {
      message: 'editor, files, materials, documents, s3 and tus need distinct paths',
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
        connectTimeoutMs: z.number().int().min(100).max(600_000).default(5_000),
        queryTimeoutMs: z.number().int().min(100).max(3_600_000).default(30_000),
        /** Off behind PgBouncer before 1.21 in transaction mode, which loses named statements. */
        preparedStatements: z.boolean().default(true),
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
      /**
       * Proxies whose `X-Forwarded-For` names the client (addresses, CIDR ranges, `loopback`);
       * none by default: the connection's peer address is the client.
       */
      trustProxy: z
        .array(
          z
            .string()
            .trim()
            .refine(
              (e) => e === 'loopback' || ipaddr.isValidCIDR(e) || ipaddr.isValid(e),
              'must be an IP address, a CIDR range such as 10.0.0.0/8, or loopback',
            ),
        )
        .default([]),
      /** Action kinds that answer JSONP when `callback` is present. */
      jsonpActions: z.array(z.enum(['config', 'list', 'catch'])).default(['config', 'list']),
      /** 'protocol': HTTP 200 + readable state (what UEditor expects); 'http': real status codes. */
      errorStatus: z.enum(['protocol', 'http']).default('protocol'),
      headersTimeoutMs: z.number().int().positive().default(30_000),
      /** A request body that sends nothing for this long is aborted (slow-body guard). */
      bodyIdleTimeoutMs: z.number().int().positive().default(30_000),
      /** A request body must arrive whole within this time. */
      bodyTimeoutMs: z.number().int().positive().default(3_600_000),
      /** After `bodyGraceMs`, a body must average at least this many bytes a second (0: off). */
      minBodyRate: z.number().int().min(0).default(1024),
      bodyGraceMs: z.number().int().positive().default(10_000),
      /** Time given to in-flight requests on SIGTERM before the server closes anyway. */
      shutdownGraceMs: z.number().int().min(0).default(30_000),
      /**
       * A refused request's unread body is read and thrown away up to this many bytes before
       * the answer, so the client can read it; past it the connection is closed.
       */
      drainMaxBytes: size().default(4_194_304),
      /** The longest a refused request's body is drained before the connection is closed. */
      drainTimeoutMs: z.number().int().min(0).default(10_000),
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
      /** A resumable or direct upload not finished this long after its creation is removed. */
      expiryMs: z.number().int().positive().default(86_400_000),
      /** How often the expired unfinished uploads are looked for and removed. */
      sweepIntervalMs: z.number().int().positive().default(300_000),
    })
    .prefault({}),
  /** Resumable uploads through the tus 1.0 protocol at `routes.tus` (docs/uploads.md). */
  tus: z
    .strictObject({
      enabled: z.boolean().default(true),
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
  /** Server-side image pipeline: header checks, auto-orientation, re-encoding (docs/security.md, rows S5, S11, S16). */
  images: z
    .strictObject({
      enabled: z.boolean().default(true),
      maxPixels: z.number().int().positive().default(50_000_000),
      maxFrames: z.number().int().positive().default(1000),
      keepMetadata: z.boolean().default(false),
      format: z.enum(['keep', 'webp']).default('keep'),
      quality: z.number().int().min(1).max(100).default(85),
      concurrency: z.number().int().min(1).max(64).default(2),
      /** Decoded pixels in flight at once, which bounds the pipeline's memory. */
      maxPixelsInFlight: z.number().int().positive().default(50_000_000),
      /** Images waiting to be decoded, in all and from one client; past either: UE_BUSY. */
      maxQueued: z.number().int().min(1).default(256),
      maxQueuedPerClient: z.number().int().min(1).default(16),
      /** Per image, counted from the moment it is queued. */
      timeoutSeconds: z.number().int().positive().default(30),
      /** Word pictures (EMF/WMF/EMZ/WMZ) converted to PNG by LibreOffice (docs/word.md). */
      metafiles: z
        .strictObject({
          enabled: z.boolean().default(true),
          /** The LibreOffice executable: a path, or a name looked up on PATH. */
          soffice: z.string().min(1).default('soffice'),
          /** Conversions at once; each runs one LibreOffice process. */
          concurrency: z.number().int().min(1).max(16).default(1),
          maxQueued: z.number().int().min(1).default(32),
          maxQueuedPerClient: z.number().int().min(1).default(4),
          /** Per picture, counted from the moment it is queued. */
          timeoutSeconds: z.number().int().min(2).max(600).default(30),
        })
        .prefault({}),
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
      maxBodyBytes: size(z.number().int().min(1024).max(16_777_216)).default(262_144),
    })
    .prefault({}),
  /** The TeX formula renderer behind `<path>.svg?<TeX>` and `.png` (docs/formula.md). */
  formula: z
    .strictObject({
      enabled: z.boolean().default(true),
      path: absolutePath.default('/formula'),
      /** Longest formula, in characters. */
      maxLength: z.number().int().min(16).max(100_000).default(2000),
      /** Macro substitutions per formula (stops \def loops). */
      maxMacros: z.number().int().min(1).max(100_000).default(500),
      /** Largest input after macro expansion, in characters. */
      maxBuffer: z.number().int().min(256).max(1_000_000).default(20_000),
      /** Time one render may take; the worker is ended after it. */
      timeoutMs: z.number().int().min(50).max(60_000).default(3000),
      workers: z.number().int().min(1).max(16).default(2),
      maxQueue: z.number().int().min(0).max(10_000).default(64),
      /** Heap of one render worker, in MiB. */
      memoryMb: z.number().int().min(32).max(4096).default(256),
      /** Rendered images kept in memory, in bytes. */
      cacheBytes: size(z.number().int().min(0).max(4_294_967_296)).default(33_554_432),
      /** PNG pixels per SVG pixel, each way. */
      pngScale: z.number().min(0.5).max(4).default(2),
      /** Largest width × height of a PNG, in pixels. */
      pngMaxPixels: z.number().int().min(10_000).max(100_000_000).default(4_000_000),
      /** PNGs drawn at once; each holds one of the threads that file reads and writes share. */
      pngConcurrency: z.number().int().min(1).max(4).default(1),
      /** PNGs waiting to be drawn, from all clients together. */
      pngQueue: z.number().int().min(0).max(10_000).default(32),
      /** PNGs waiting to be drawn from one client (address, /64 for IPv6). */
      pngQueuePerClient: z.number().int().min(0).max(10_000).default(4),
      /** Renders of formulas not in the cache one client may start per minute. 0: no limit. */
      rendersPerMinute: z.number().int().min(0).default(300),
    })
    .prefault({}),
  /** Upload flood guards (docs/security.md, row S14), per client address. */
  limits: z
    .strictObject({
      /** Uploads a client may start per minute (a burst of this many, refilled evenly). 0: off. */
      uploadsPerMinute: z.number().int().min(0).default(120),
      /** Uploads one client may have in flight at once. 0: off. */
      concurrentUploads: z.number().int().min(0).default(16),
      /** Uploads past `concurrentUploads` that may wait for a slot, per client. 0: none wait. */
      uploadQueue: z.number().int().min(0).default(64),
      /** How long a waiting upload waits for a slot before it is refused. */
      uploadQueueWaitMs: z.number().int().min(0).default(30_000),
      /** Refuse uploads when the storage volume has less free space than this. 0: off. */
      minFreeBytes: size().default(134_217_728),
      /** Open connections one client address may hold on the standalone server. 0: off. */
      connectionsPerClient: z.number().int().min(0).default(256),
      /** Bytes one user may have stored, summed in the index (docs/auth.md). 0: no quota. */
      quotaBytes: size().default(0),
      /** Signed-in users whose uploads skip the per-client rate and in-flight limits (docs/benchmarks.md). */
      exemptUsers: z.array(userId).default([]),
    })
    .prefault({}),
  /** Who may use the editor endpoint and the materials API (docs/auth.md). */
  auth: AuthConfigSchema,
  /** The AI assistant relay (docs/ai.md): off until baseUrl, apiKey and model are all set. */
  ai: z
    .strictObject({
      /** The upstream OpenAI-compatible API, e.g. https://api.deepseek.com/v1. */
      baseUrl: z.url({ protocol: /^https?$/ }).optional(),
      /** The model key (a secret: never sent to the browser, answered or logged). */
      apiKey: z.string().min(1).max(4096).optional(),
      model: modelName.optional(),
      /** More models a client may ask for by name; the default model is always allowed. */
      models: z.array(modelName).default([]),
      /** The editor action; not checked against UEditor options (the dialog never looks it up). */
      actionName: z
        .string()
        .regex(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/, 'must be 1-64 letters, digits, "_" or "-"')
        .default('ai'),
      /** The body the dialog sends and reads back: ModStart (no model choice) or OpenAi. */
      driver: z.enum(['ModStart', 'OpenAi']).default('ModStart'),
      /** The URL the dialog posts to; default: the editor endpoint with `?action=<actionName>`. */
      url: z.string().min(1).max(2048).optional(),
      timeoutMs: z.number().int().min(1_000).max(600_000).default(120_000),
      idleTimeoutMs: z.number().int().min(100).max(600_000).default(60_000),
      /** The longest a client may take nothing of the answer while part of it waits. */
      writeTimeoutMs: z.number().int().min(100).max(600_000).default(30_000),
      maxPromptChars: z.number().int().min(100).max(1_000_000).default(60_000),
      maxOutputTokens: z.number().int().min(1).max(1_000_000).default(4_096),
      /** OpenAI's reasoning models take only max_completion_tokens; most others max_tokens. */
      maxTokensParam: z.enum(['max_tokens', 'max_completion_tokens']).default('max_tokens'),
      requestsPerMinute: z.number().int().min(0).default(20),
      dailyTokens: z.number().int().min(0).default(200_000),
      concurrency: z.number().int().min(1).max(10_000).default(8),
      concurrencyPerUser: z.number().int().min(1).max(1_000).default(2),
      /** Put the prompt text in the audit line. */
      logPrompts: z.boolean().default(false),
    })
    .refine(
      (a) =>
        (a.baseUrl === undefined) === (a.apiKey === undefined) &&
        (a.baseUrl === undefined) === (a.model === undefined),
      { message: 'set baseUrl, apiKey and model together (or none of them to keep AI off)' },
    )
    .prefault({}),
  /** The documents API for the host app's save path, and orphaned files (docs/documents.md). */
  /** Word documents imported as HTML by the editor's word import action (docs/word.md). */
  word: z
    .strictObject({
      /** Most pictures one document may bring; past it the import is refused. */
      maxPictures: z.number().int().min(0).max(10_000).default(200),
      /** The whole conversion (a .doc through LibreOffice, then the .docx), from when it is queued. */
      timeoutSeconds: z.number().int().min(2).max(600).default(60),
      /** Documents converted at once; the others wait (UE_BUSY past `maxQueued`). */
      concurrency: z.number().int().min(1).max(16).default(2),
      maxQueued: z.number().int().min(1).default(16),
      /** The unpacked parts of one .docx together, counted as they unpack. */
      maxUnpackedBytes: size(z.number().int().min(1_048_576)).default(209_715_200),
      /** Largest unpacked/packed ratio of one part (a zip bomb packs far tighter). */
      maxRatio: z.number().int().min(2).max(100_000).default(200),
      /** Most parts (zip entries) one .docx may have. */
      maxEntries: z.number().int().min(10).max(100_000).default(2000),
      /**
       * Convert `.doc` even where LibreOffice cannot be cut off from the network (not root): only
       * for a server that has no network itself, as LibreOffice fetches linked pictures.
       */
      docWithNetwork: z.boolean().default(false),
    })
    .prefault({}),
  documents: z
    .strictObject({
      /** Off: existing libraries are untouched; on: tracking starts (once) and orphans can be found. */
      enabled: z.boolean().default(false),
      /** Largest article a save may send. */
      maxBodyBytes: size(z.number().int().min(1024).max(67_108_864)).default(4_194_304),
      /** A file no document references becomes an orphan this long after it was stored. */
      orphanGrace: duration.default('7d'),
      /** How often each node removes orphans by itself; absent: never (use `files orphans --fix`). */
      sweepInterval: duration.optional(),
      /**
       * Hosts whose https pages an article may embed in an `iframe` (video players); none: every
       * iframe is removed.
       */
      iframeHosts: z.array(hostName).default([]),
      /** Elements open inside one another that a saved article may have; deeper is refused. */
      maxDepth: z.number().int().min(16).max(4_096).default(256),
      /** Elements a saved article may have in all; more is refused. */
      maxElements: z.number().int().min(1_000).max(10_000_000).default(100_000),
      /** Worker threads that clean articles, started by the first save. */
      workers: z.number().int().min(1).max(16).default(2),
      /** The longest one article may take to clean; its worker is then terminated. */
      timeoutMs: z.number().int().min(100).max(60_000).default(1_500),
      /** Saves waiting for a worker at most; more are refused with UE_BUSY. */
      maxQueue: z.number().int().min(1).max(1_000).default(16),
    })
    .prefault({}),
  /** Uploads straight to the S3 bucket, signed by this server (docs/uploads.md). */
  direct: z
    .strictObject({
      /** Serve `routes.s3` when storage is S3; with local storage it is never served. */
      enabled: z.boolean().default(true),
      /** How long a signed POST policy or part URL stays valid. */
      signedUrlSeconds: z.number().int().min(60).max(3_600).default(600),
    })
    .prefault({}),
  /** The opt-in delete action: a user deletes their own stored file by its URL. */
  delete: z
    .strictObject({
      enabled: z.boolean().default(false),
      actionName: actionName.default('deletefile'),
    })
    .prefault({}),
  /** Events for the host app as signed JSON POSTs (docs/events.md): off until url is set. */
  webhooks: z
    .strictObject({
      /** Where every event is posted; operator-trusted, http or https only. */
      url: z
        .url({ protocol: /^https?$/ })
        .max(2048)
        .optional(),
      /** The HMAC key of `X-Ueditor-Signature`; required with `url`. */
      secret: z.string().min(16, 'must be at least 16 characters').max(4096).optional(),
      /** One attempt: connect, answer and body. */
      timeoutMs: z.number().int().min(100).max(300_000).default(10_000),
      /** The wait after the first failure; it doubles per attempt, with jitter. */
      retryBaseMs: z.number().int().min(10).max(3_600_000).default(1_000),
      /** The longest wait between two attempts. */
      retryMaxMs: z.number().int().min(10).max(86_400_000).default(600_000),
      /** An event still failing this long after its change is given up (logged at error). */
      maxAgeMs: z.number().int().min(1_000).default(259_200_000),
      /** How often each node looks for due events (retries, events of other nodes). */
      pollMs: z.number().int().min(10).max(600_000).default(1_000),
      /** Events one node delivers at once. */
      concurrency: z.number().int().min(1).max(64).default(4),
    })
    .refine((w) => w.url === undefined || w.secret !== undefined, {
      message:
        'a webhook url needs a secret (webhooks.secret, UEDITOR_WEBHOOK_SECRET) to sign with',
      path: ['secret'],
    })
    .refine((w) => w.retryBaseMs <= w.retryMaxMs, {
      message: 'retryBaseMs must not exceed retryMaxMs',
      path: ['retryBaseMs'],
    })
    .prefault({}),
})

export type ServerConfigInput = z.input<typeof ServerConfigSchema>
export type ParsedServerConfig = z.infer<typeof ServerConfigSchema>
