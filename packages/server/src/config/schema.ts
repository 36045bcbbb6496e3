import ipaddr from 'ipaddr.js'
import * as z from '#zod'
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

/** An integer of at least `min`, and at most `max` when given. */
function int(min: number, max?: number) {
  return z.number().check(z.int(), z.minimum(min), ...(max === undefined ? [] : [z.maximum(max)]))
}
/** An integer above 0 (refused as "expected number to be >0"), and at most `max` when given. */
function positiveInt(max?: number) {
  return z.number().check(z.int(), z.positive(), ...(max === undefined ? [] : [z.maximum(max)]))
}

const actionName = z.string().check(
  z.regex(
    /^[A-Za-z][A-Za-z0-9_-]{0,63}$/,
    'must be 1-64 letters, digits, "_" or "-", starting with a letter',
  ),
  z.refine((v) => !EDITOR_OPTION_NAMES.has(v), {
    message:
      'clashes with a UEditor option name; the editor looks action names up as options first and would replace it',
  }),
)
const fieldName = z
  .string()
  .check(z.regex(/^[A-Za-z0-9_.[\]-]{1,64}$/, 'must be 1-64 safe characters'))
const SIZES = new WeakSet<z.ZodMiniType>()
/** True for the schema of a size setting, which reads `2MB` itself (see `size`). */
export const isSizeSchema = (schema: z.ZodMiniType) => SIZES.has(schema)
/** A byte count, as bytes or with a unit (`2MB`, `512KB`, `1.5GiB`), checked against `bounds`. */
function size(bounds: z.ZodMiniNumber<number> = int(0)) {
  const schema = z.pipe(
    z.pipe(
      z.custom<number | string>(),
      z.transform((value, ctx) => {
        const bytes = parseByteSize(value)
        if (bytes !== undefined) return bytes
        ctx.issues.push({ code: 'custom', message: SIZE_FORMS, input: value })
        return z.NEVER
      }),
    ),
    bounds,
  )
  SIZES.add(schema)
  return schema
}
const byteSize = size(positiveInt())
/** A duration as text: `7d`, `12h`, `30m`, `90s` or seconds (`3600`); read with parseDuration. */
const duration = z.string().check(z.refine(isDuration, { message: DURATION_FORMS }))
/** A lower-case host name (no port, no scheme): `player.bilibili.com`. */
const hostName = z
  .string()
  .check(
    z.trim(),
    z.toLowerCase(),
    z.regex(
      /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/,
      'must be a host name such as player.example.com',
    ),
  )
const urlPrefix = z.string().check(z.maxLength(2048))
const align = z.enum(['none', 'left', 'right', 'center'])
const extList = z.pipe(
  z.array(
    z
      .string()
      .check(
        z.trim(),
        z.toLowerCase(),
        z.regex(/^\.[a-z0-9]{1,10}$/, 'must be a dotted extension such as ".png"'),
      ),
  ),
  z.transform((list) => [...new Set(list)]),
)

const pathFormat = z.string().check(
  z.maxLength(200),
  z.superRefine((v, ctx) => {
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
  }),
)

export const EditorConfigSchema = z.catchall(
  z.object({
    imageActionName: z._default(actionName, D.imageActionName),
    imageFieldName: z._default(fieldName, D.imageFieldName),
    imageMaxSize: z._default(byteSize, D.imageMaxSize),
    imageAllowFiles: z._default(extList, D.imageAllowFiles),
    imageCompressEnable: z._default(z.boolean(), D.imageCompressEnable),
    imageCompressBorder: z._default(positiveInt(), D.imageCompressBorder),
    imageInsertAlign: z._default(align, 'none'),
    imageUrlPrefix: z._default(urlPrefix, D.imageUrlPrefix),
    imagePathFormat: z._default(pathFormat, D.imagePathFormat),

    scrawlActionName: z._default(actionName, D.scrawlActionName),
    scrawlFieldName: z._default(fieldName, D.scrawlFieldName),
    scrawlMaxSize: z._default(byteSize, D.scrawlMaxSize),
    scrawlUrlPrefix: z._default(urlPrefix, D.scrawlUrlPrefix),
    scrawlInsertAlign: z._default(align, 'none'),
    scrawlPathFormat: z._default(pathFormat, D.scrawlPathFormat),

    snapscreenActionName: z._default(actionName, D.snapscreenActionName),
    snapscreenUrlPrefix: z._default(urlPrefix, D.snapscreenUrlPrefix),
    snapscreenInsertAlign: z._default(align, 'none'),
    snapscreenPathFormat: z._default(pathFormat, D.snapscreenPathFormat),

    catcherActionName: z._default(actionName, D.catcherActionName),
    catcherFieldName: z._default(fieldName, D.catcherFieldName),
    catcherLocalDomain: z._default(
      z.array(z.string().check(z.trim(), z.toLowerCase(), z.minLength(1))),
      D.catcherLocalDomain,
    ),
    catcherUrlPrefix: z._default(urlPrefix, D.catcherUrlPrefix),
    catcherMaxSize: z._default(byteSize, D.catcherMaxSize),
    catcherAllowFiles: z._default(extList, D.catcherAllowFiles),
    catcherPathFormat: z._default(pathFormat, D.catcherPathFormat),

    videoActionName: z._default(actionName, D.videoActionName),
    videoFieldName: z._default(fieldName, D.videoFieldName),
    videoUrlPrefix: z._default(urlPrefix, D.videoUrlPrefix),
    videoMaxSize: z._default(byteSize, D.videoMaxSize),
    videoAllowFiles: z._default(extList, D.videoAllowFiles),
    videoPathFormat: z._default(pathFormat, D.videoPathFormat),

    audioActionName: z._default(actionName, D.audioActionName),
    audioFieldName: z._default(fieldName, D.audioFieldName),
    audioUrlPrefix: z._default(urlPrefix, D.audioUrlPrefix),
    audioMaxSize: z._default(byteSize, D.audioMaxSize),
    audioAllowFiles: z._default(extList, D.audioAllowFiles),
    audioPathFormat: z._default(pathFormat, D.audioPathFormat),

    fileActionName: z._default(actionName, D.fileActionName),
    fileFieldName: z._default(fieldName, D.fileFieldName),
    fileUrlPrefix: z._default(urlPrefix, D.fileUrlPrefix),
    fileMaxSize: z._default(byteSize, D.fileMaxSize),
    fileAllowFiles: z._default(extList, D.fileAllowFiles),
    filePathFormat: z._default(pathFormat, D.filePathFormat),

    wordImportActionName: z._default(actionName, D.wordImportActionName),
    wordImportFieldName: z._default(fieldName, D.wordImportFieldName),
    wordImportMaxSize: z._default(byteSize, D.wordImportMaxSize),
    wordImportAllowFiles: z._default(
      z.pipe(
        z.array(z.enum(['.docx', '.doc'])),
        z.transform((list) => [...new Set(list)]),
      ),
      D.wordImportAllowFiles,
    ),

    imageManagerActionName: z._default(actionName, D.imageManagerActionName),
    imageManagerListSize: z._default(int(1, 100), D.imageManagerListSize),
    imageManagerUrlPrefix: z._default(urlPrefix, D.imageManagerUrlPrefix),
    imageManagerInsertAlign: z._default(align, 'none'),
    imageManagerAllowFiles: z._default(extList, D.imageManagerAllowFiles),

    fileManagerActionName: z._default(actionName, D.fileManagerActionName),
    fileManagerUrlPrefix: z._default(urlPrefix, D.fileManagerUrlPrefix),
    fileManagerListSize: z._default(int(1, 100), D.fileManagerListSize),
    fileManagerAllowFiles: z._default(extList, D.fileManagerAllowFiles),

    // Only what is set here (or the renderer's URL, see formula.enabled) reaches the browser,
    // so the page's own formulaConfig keeps every key the server leaves alone.
    formulaConfig: z.optional(
      z.looseObject({
        imageUrlTemplate: z.optional(z.string().check(z.maxLength(2048), z.includes('{}'))),
        editorMode: z.optional(z.enum(['live', 'plain'])),
        editorLiveServer: z.optional(z.string().check(z.maxLength(2048))),
      }),
    ),
    toolbarShows: z._default(z.record(z.string(), z.boolean()), {}),
    shortcutMenuShows: z._default(z.record(z.string(), z.boolean()), {}),
  }),
  // Other UEditor options (imageConfig, custom keys…) are forwarded verbatim to the browser.
  z.unknown(),
)

export type EditorConfig = z.infer<typeof EditorConfigSchema>

const bearerToken = z
  .string()
  .check(
    z.minLength(16),
    z.maxLength(512),
    z.regex(/^[A-Za-z0-9._~+/-]+=*$/, 'must be a Bearer token: letters, digits and -._~+/ only'),
  )
const absolutePath = z
  .string()
  .check(z.regex(/^\/[A-Za-z0-9._~/-]*$/, 'must be an absolute URL path'))

const userId = z.string().check(z.regex(USER_ID, 'must be 1-128 letters, digits or _.@|-'))
/** `user:token` (UEDITOR_AUTH_TOKENS="alice:…,bob:…"); the message never repeats the value. */
const userToken = z
  .string()
  .check(
    z.regex(
      /^[A-Za-z0-9_.@|-]{1,128}:[A-Za-z0-9._~+/-]{16,512}=*$/,
      'must be user:token, the token 16-512 characters of letters, digits and -._~+/',
    ),
  )
const modelName = z
  .string()
  .check(z.regex(/^[\w.:/@+-]{1,200}$/, 'must be a model name such as gpt-4o-mini'))
const headerName = z
  .string()
  .check(z.regex(/^[A-Za-z][A-Za-z0-9-]{0,63}$/, 'must be an HTTP header name such as X-Token'))
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

const AuthConfigSchema = z.prefault(
  z
    .strictObject({
      /** Absent: chosen from what is configured (hook, JWT, tokens), else `none`. */
      mode: z.optional(z.enum(['none', 'tokens', 'jwt', 'hook'])),
      tokens: z._default(z.array(userToken), []),
      /** Users (static tokens) who may see and delete every file and write materials. */
      adminUsers: z._default(z.array(userId), []),
      jwt: z.prefault(
        z
          .strictObject({
            /** HS256 shared secret (a secret: messages name the key, never the value). */
            secret: z.optional(z.string().check(z.minLength(32, 'must be at least 32 characters'))),
            jwksUrl: z.optional(z.url({ protocol: /^https?$/ })),
            /** Pinned; default HS256 with a secret, RS256 and ES256 with a JWKS. */
            algorithms: z.optional(z.array(z.enum(JWT_ALGORITHMS)).check(z.minLength(1))),
            issuer: z.optional(z.string().check(z.minLength(1))),
            audience: z.optional(z.string().check(z.minLength(1))),
            /** A claim that grants admin when it is `true`, `"admin"`, or a list holding "admin". */
            adminClaim: z._default(z.string().check(z.minLength(1)), 'ueditor_admin'),
            clockToleranceSeconds: z._default(int(0, 300), 30),
          })
          .check(
            z.refine((j) => !(j.secret !== undefined && j.jwksUrl !== undefined), {
              message: 'set either secret or jwksUrl, not both',
            }),
          ),
        {},
      ),
      /** A second header the token may come in (raw or as `Bearer …`), e.g. X-Token. */
      header: z.optional(headerName),
      /** A query parameter the token may come in (the only channel JSONP can use). Off: absent. */
      queryParam: z.optional(
        z.string().check(
          z.regex(/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/, 'must be a query parameter name such as token'),
          z.refine((v) => !['action', 'callback', 'start', 'size'].includes(v), {
            message: 'clashes with a parameter the editor sends',
          }),
        ),
      ),
      /** `config` answers without a credential (it holds nothing private). */
      publicConfig: z._default(z.boolean(), true),
      /** Listings show every user's files (those with an owner), not only the caller's. */
      sharedLibrary: z._default(z.boolean(), false),
      /** With the authorize hook (cookies), JSONP listings and JSONP catch are refused unless set. */
      hookJsonp: z._default(z.boolean(), false),
      /** Failed credentials one client address may present per minute before it is throttled. */
      failuresPerMinute: z._default(int(0), 30),
    })
    .check(
      z.superRefine((a, ctx) => {
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
      }),
    ),
  {},
)

export const ServerConfigSchema = z.strictObject({
  dataDir: z._default(z.string().check(z.minLength(1)), './data'),
  locale: z._default(z.enum(['zh-CN', 'en']), 'zh-CN'),
  logLevel: z._default(z.enum(['debug', 'info', 'warn', 'error', 'silent']), 'info'),
  /** `auto`: pino-pretty lines when stderr is a terminal, JSON lines otherwise. */
  logFormat: z._default(z.enum(['auto', 'json', 'pretty']), 'auto'),
  /** Prometheus metrics (docs/operations.md). */
  metrics: z.prefault(
    z.strictObject({
      enabled: z._default(z.boolean(), true),
      path: z._default(absolutePath, '/metrics'),
      /** Bearer token a scraper must send; none: the metrics path is open. */
      token: z.optional(bearerToken),
    }),
    {},
  ),
  editor: z.prefault(EditorConfigSchema, {}),
  /** Keys in `editor` the server does not know but that are deliberate (no warning at start). */
  editorExtraKeys: z._default(z.array(z.string().check(z.minLength(1))), []),
  routes: z.prefault(
    z
      .strictObject({
        editor: z._default(absolutePath, '/ueditor'),
        files: z._default(absolutePath, '/uploads'),
        materials: z._default(absolutePath, '/materials'),
        documents: z._default(absolutePath, '/documents'),
        /** Where `@uppy/aws-s3`'s signing calls arrive (`<s3>/s3/params`, …); S3 storage only. */
        s3: z._default(absolutePath, '/s3'),
        /** Resumable uploads (tus 1.0): `POST` here, then `HEAD`/`PATCH`/`DELETE` `<tus>/<id>`. */
        tus: z._default(absolutePath, '/tus'),
      })
      .check(
        z.refine(
          (r) => new Set([r.editor, r.files, r.materials, r.documents, r.s3, r.tus]).size === 6,
          {
            message: 'editor, files, materials, documents, s3 and tus need distinct paths',
          },
        ),
      ),
    {},
  ),
  /** Base URL put in front of storage keys in results, e.g. a CDN. Default: routes.files + '/'. */
  publicUrl: z.optional(z.string().check(z.maxLength(2048))),
  storage: z.prefault(
    z.discriminatedUnion('driver', [
      z.strictObject({
        driver: z.literal('local'),
        root: z.optional(z.string().check(z.minLength(1))),
      }),
      z
        .strictObject({
          driver: z.literal('s3'),
          bucket: z.string().check(z.minLength(3), z.maxLength(255)),
          region: z._default(z.string().check(z.minLength(1)), 'us-east-1'),
          /** S3-compatible endpoint (MinIO, R2, …); AWS when absent. */
          endpoint: z.optional(z.url({ protocol: /^https?$/ })),
          forcePathStyle: z._default(z.boolean(), false),
          // Secrets: messages name the key, never the value. Absent: the SDK's default chain.
          accessKeyId: z.optional(z.string().check(z.minLength(1))),
          secretAccessKey: z.optional(z.string().check(z.minLength(1))),
          prefix: z.optional(
            z.string().check(
              z.maxLength(512),
              z.regex(/^([A-Za-z0-9_.-]+\/?)*$/, 'must be folder names separated by "/"'),
              z.refine((p) => !p.split('/').some((s) => s === '.' || s === '..'), {
                message: 'may not contain "." or ".." folders',
              }),
            ),
          ),
        })
        .check(
          z.refine((s) => (s.accessKeyId === undefined) === (s.secretAccessKey === undefined), {
            message: 'accessKeyId and secretAccessKey must be set together',
          }),
        ),
    ]),
    { driver: 'local' },
  ),
  index: z.prefault(
    z.discriminatedUnion('driver', [
      z.strictObject({
        driver: z.literal('sqlite'),
        file: z.optional(z.string().check(z.minLength(1))),
        /** 'auto': Node's built-in node:sqlite where it exists (22.13+), else better-sqlite3. */
        engine: z.optional(z.enum(['auto', 'node:sqlite', 'better-sqlite3'])),
      }),
      z.strictObject({
        driver: z.literal('postgres'),
        // The URL may carry a password: messages name the key, never the value.
        url: z
          .string()
          .check(
            z.maxLength(4096),
            z.regex(/^postgres(ql)?:\/\/\S+$/i, 'must be a postgres:// or postgresql:// URL'),
          ),
        poolSize: z._default(int(1, 1000), 10),
        connectTimeoutMs: z._default(int(100, 600_000), 5_000),
        queryTimeoutMs: z._default(int(100, 3_600_000), 30_000),
        /** Off behind PgBouncer before 1.21 in transaction mode, which loses named statements. */
        preparedStatements: z._default(z.boolean(), true),
      }),
    ]),
    { driver: 'sqlite' },
  ),
  http: z.prefault(
    z.strictObject({
      host: z._default(z.string().check(z.minLength(1)), '127.0.0.1'),
      port: z._default(int(0, 65535), 8080),
      corsOrigins: z._default(
        z.array(
          z
            .string()
            .check(z.regex(/^https?:\/\/[^/\s]+$/, 'must be an origin such as https://a.example')),
        ),
        [],
      ),
      /**
       * Proxies whose `X-Forwarded-For` names the client (addresses, CIDR ranges, `loopback`);
       * none by default: the connection's peer address is the client.
       */
      trustProxy: z._default(
        z.array(
          z.string().check(
            z.trim(),
            z.refine(
              (e) => e === 'loopback' || ipaddr.isValidCIDR(e) || ipaddr.isValid(e),
              'must be an IP address, a CIDR range such as 10.0.0.0/8, or loopback',
            ),
          ),
        ),
        [],
      ),
      /** Action kinds that answer JSONP when `callback` is present. */
      jsonpActions: z._default(z.array(z.enum(['config', 'list', 'catch'])), ['config', 'list']),
      /** 'protocol': HTTP 200 + readable state (what UEditor expects); 'http': real status codes. */
      errorStatus: z._default(z.enum(['protocol', 'http']), 'protocol'),
      headersTimeoutMs: z._default(positiveInt(), 30_000),
      /** A request body that sends nothing for this long is aborted (slow-body guard). */
      bodyIdleTimeoutMs: z._default(positiveInt(), 30_000),
      /** A request body must arrive whole within this time. */
      bodyTimeoutMs: z._default(positiveInt(), 3_600_000),
      /** After `bodyGraceMs`, a body must average at least this many bytes a second (0: off). */
      minBodyRate: z._default(int(0), 1024),
      bodyGraceMs: z._default(positiveInt(), 10_000),
      /** Time given to in-flight requests on SIGTERM before the server closes anyway. */
      shutdownGraceMs: z._default(int(0), 30_000),
      /**
       * A refused request's unread body is read and thrown away up to this many bytes before
       * the answer, so the client can read it; past it the connection is closed.
       */
      drainMaxBytes: z._default(size(), 4_194_304),
      /** The longest a refused request's body is drained before the connection is closed. */
      drainTimeoutMs: z._default(int(0), 10_000),
    }),
    {},
  ),
  /** A folder of static files (the editor's files, the site's page) served at `/`. */
  site: z.prefault(
    z.strictObject({
      dir: z.optional(z.string().check(z.minLength(1))),
      /** File served for a folder URL (`/`, `/docs/`). */
      index: z._default(
        z.string().check(z.regex(/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/, 'must be a file name')),
        'index.html',
      ),
    }),
    {},
  ),
  uploads: z.prefault(
    z.strictObject({
      /** Temp spool folder; default `<dataDir>/tmp` so it sits on the storage volume. */
      tempDir: z.optional(z.string().check(z.minLength(1))),
      /** Extra form fields allowed next to the file (WebUploader sends five). */
      maxFields: z._default(int(0), 20),
      /** A resumable or direct upload not finished this long after its creation is removed. */
      expiryMs: z._default(positiveInt(), 86_400_000),
      /** How often the expired unfinished uploads are looked for and removed. */
      sweepIntervalMs: z._default(positiveInt(), 300_000),
    }),
    {},
  ),
  /** Resumable uploads through the tus 1.0 protocol at `routes.tus` (docs/uploads.md). */
  tus: z.prefault(
    z.strictObject({
      enabled: z._default(z.boolean(), true),
    }),
    {},
  ),
  /** Remote image capture (`catch`): only public addresses unless a host is listed here. */
  catcher: z.prefault(
    z.strictObject({
      /** Exact hosts or host:port fetched even when not public (intranet image servers). */
      allowHosts: z._default(
        z.array(
          z
            .string()
            .check(
              z.trim(),
              z.toLowerCase(),
              z.regex(
                /^(\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(:\d{1,5})?$/,
                'must be a host or host:port such as 127.0.0.1:18090',
              ),
            ),
        ),
        [],
      ),
      connectTimeoutMs: z._default(positiveInt(), 5_000),
      /** One source, redirects and body included; the editor itself gives up after 60 s. */
      timeoutMs: z._default(positiveInt(55_000), 15_000),
      /** All sources of one request; later sources fail once it has passed. */
      requestTimeoutMs: z._default(positiveInt(55_000), 45_000),
      maxRedirects: z._default(int(0, 10), 3),
      maxSources: z._default(int(1, 100), 20),
      concurrency: z._default(int(1, 16), 3),
      userAgent: z._default(
        z.string().check(z.maxLength(256), z.regex(/^[\x20-\x7e]*$/, 'must be printable ASCII')),
        'Mozilla/5.0 (compatible; ueditor-backend)',
      ),
      referer: z._default(z.enum(['none', 'origin']), 'none'),
    }),
    {},
  ),
  security: z.prefault(
    z.strictObject({
      /** Opt-in: allow SVG/HTML/XML and similar in allow-lists (served as sandboxed attachments). */
      allowActiveContent: z._default(z.boolean(), false),
    }),
    {},
  ),
  /** Server-side image pipeline: header checks, auto-orientation, re-encoding (docs/security.md, rows S5, S11, S16). */
  images: z.prefault(
    z.strictObject({
      enabled: z._default(z.boolean(), true),
      maxPixels: z._default(positiveInt(), 50_000_000),
      maxFrames: z._default(positiveInt(), 1000),
      keepMetadata: z._default(z.boolean(), false),
      format: z._default(z.enum(['keep', 'webp']), 'keep'),
      quality: z._default(int(1, 100), 85),
      concurrency: z._default(int(1, 64), 2),
      /** Decoded pixels in flight at once, which bounds the pipeline's memory. */
      maxPixelsInFlight: z._default(positiveInt(), 50_000_000),
      /** Images waiting to be decoded, in all and from one client; past either: UE_BUSY. */
      maxQueued: z._default(int(1), 256),
      maxQueuedPerClient: z._default(int(1), 16),
      /** Per image, counted from the moment it is queued. */
      timeoutSeconds: z._default(positiveInt(), 30),
      /** Word pictures (EMF/WMF/EMZ/WMZ) converted to PNG by LibreOffice (docs/word.md). */
      metafiles: z.prefault(
        z.strictObject({
          enabled: z._default(z.boolean(), true),
          /** The LibreOffice executable: a path, or a name looked up on PATH. */
          soffice: z._default(z.string().check(z.minLength(1)), 'soffice'),
          /** Conversions at once; each runs one LibreOffice process. */
          concurrency: z._default(int(1, 16), 1),
          maxQueued: z._default(int(1), 32),
          maxQueuedPerClient: z._default(int(1), 4),
          /** Per picture, counted from the moment it is queued. */
          timeoutSeconds: z._default(int(2, 600), 30),
        }),
        {},
      ),
      watermark: z.optional(
        z.strictObject({
          file: z.string().check(z.minLength(1)),
          position: z._default(
            z.enum([
              'north',
              'northeast',
              'east',
              'southeast',
              'south',
              'southwest',
              'west',
              'northwest',
              'center',
            ]),
            'southeast',
          ),
          opacity: z._default(z.number().check(z.minimum(0), z.maximum(1)), 0.5),
          margin: z._default(int(0, 10_000), 16),
        }),
      ),
    }),
    {},
  ),
  /** The materials service behind the UEditor Plus Designer (docs/materials.md). */
  materials: z.prefault(
    z.strictObject({
      enabled: z._default(z.boolean(), true),
      /** Bearer tokens allowed to read; none: reads are public while `http.host` is loopback. */
      tokens: z._default(z.array(bearerToken), []),
      /** Bearer tokens allowed to write (and read); none: the admin routes are closed. */
      adminTokens: z._default(z.array(bearerToken), []),
      /** Load the demo materials when the materials tables are first created. */
      seed: z._default(z.boolean(), true),
      /** Largest JSON request body. */
      maxBodyBytes: z._default(size(int(1024, 16_777_216)), 262_144),
    }),
    {},
  ),
  /** The TeX formula renderer behind `<path>.svg?<TeX>` and `.png` (docs/formula.md). */
  formula: z.prefault(
    z.strictObject({
      enabled: z._default(z.boolean(), true),
      path: z._default(absolutePath, '/formula'),
      /** Longest formula, in characters. */
      maxLength: z._default(int(16, 100_000), 2000),
      /** Macro substitutions per formula (stops \def loops). */
      maxMacros: z._default(int(1, 100_000), 500),
      /** Largest input after macro expansion, in characters. */
      maxBuffer: z._default(int(256, 1_000_000), 20_000),
      /** Time one render may take; the worker is ended after it. */
      timeoutMs: z._default(int(50, 60_000), 3000),
      workers: z._default(int(1, 16), 2),
      maxQueue: z._default(int(0, 10_000), 64),
      /** Heap of one render worker, in MiB. */
      memoryMb: z._default(int(32, 4096), 256),
      /** Rendered images kept in memory, in bytes. */
      cacheBytes: z._default(size(int(0, 4_294_967_296)), 33_554_432),
      /** PNG pixels per SVG pixel, each way. */
      pngScale: z._default(z.number().check(z.minimum(0.5), z.maximum(4)), 2),
      /** Largest width × height of a PNG, in pixels. */
      pngMaxPixels: z._default(int(10_000, 100_000_000), 4_000_000),
      /** PNGs drawn at once; each holds one of the threads that file reads and writes share. */
      pngConcurrency: z._default(int(1, 4), 1),
      /** PNGs waiting to be drawn, from all clients together. */
      pngQueue: z._default(int(0, 10_000), 32),
      /** PNGs waiting to be drawn from one client (address, /64 for IPv6). */
      pngQueuePerClient: z._default(int(0, 10_000), 4),
      /** Renders of formulas not in the cache one client may start per minute. 0: no limit. */
      rendersPerMinute: z._default(int(0), 300),
    }),
    {},
  ),
  /** Upload flood guards (docs/security.md, row S14), per client address. */
  limits: z.prefault(
    z.strictObject({
      /** Uploads a client may start per minute (a burst of this many, refilled evenly). 0: off. */
      uploadsPerMinute: z._default(int(0), 120),
      /** Uploads one client may have in flight at once. 0: off. */
      concurrentUploads: z._default(int(0), 16),
      /** Uploads past `concurrentUploads` that may wait for a slot, per client. 0: none wait. */
      uploadQueue: z._default(int(0), 64),
      /** How long a waiting upload waits for a slot before it is refused. */
      uploadQueueWaitMs: z._default(int(0), 30_000),
      /** Refuse uploads when the storage volume has less free space than this. 0: off. */
      minFreeBytes: z._default(size(), 134_217_728),
      /** Open connections one client address may hold on the standalone server. 0: off. */
      connectionsPerClient: z._default(int(0), 256),
      /** Bytes one user may have stored, summed in the index (docs/auth.md). 0: no quota. */
      quotaBytes: z._default(size(), 0),
      /** Signed-in users whose uploads skip the per-client rate and in-flight limits (docs/benchmarks.md). */
      exemptUsers: z._default(z.array(userId), []),
    }),
    {},
  ),
  /** Who may use the editor endpoint and the materials API (docs/auth.md). */
  auth: AuthConfigSchema,
  /** The AI assistant relay (docs/ai.md): off until baseUrl, apiKey and model are all set. */
  ai: z.prefault(
    z
      .strictObject({
        /** The upstream OpenAI-compatible API, e.g. https://api.deepseek.com/v1. */
        baseUrl: z.optional(z.url({ protocol: /^https?$/ })),
        /** The model key (a secret: never sent to the browser, answered or logged). */
        apiKey: z.optional(z.string().check(z.minLength(1), z.maxLength(4096))),
        model: z.optional(modelName),
        /** More models a client may ask for by name; the default model is always allowed. */
        models: z._default(z.array(modelName), []),
        /** The editor action; not checked against UEditor options (the dialog never looks it up). */
        actionName: z._default(
          z
            .string()
            .check(
              z.regex(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/, 'must be 1-64 letters, digits, "_" or "-"'),
            ),
          'ai',
        ),
        /** The body the dialog sends and reads back: ModStart (no model choice) or OpenAi. */
        driver: z._default(z.enum(['ModStart', 'OpenAi']), 'ModStart'),
        /** The URL the dialog posts to; default: the editor endpoint with `?action=<actionName>`. */
        url: z.optional(z.string().check(z.minLength(1), z.maxLength(2048))),
        timeoutMs: z._default(int(1_000, 600_000), 120_000),
        idleTimeoutMs: z._default(int(100, 600_000), 60_000),
        /** The longest a client may take nothing of the answer while part of it waits. */
        writeTimeoutMs: z._default(int(100, 600_000), 30_000),
        maxPromptChars: z._default(int(100, 1_000_000), 60_000),
        maxOutputTokens: z._default(int(1, 1_000_000), 4_096),
        /** OpenAI's reasoning models take only max_completion_tokens; most others max_tokens. */
        maxTokensParam: z._default(z.enum(['max_tokens', 'max_completion_tokens']), 'max_tokens'),
        requestsPerMinute: z._default(int(0), 20),
        dailyTokens: z._default(int(0), 200_000),
        concurrency: z._default(int(1, 10_000), 8),
        concurrencyPerUser: z._default(int(1, 1_000), 2),
        /** Put the prompt text in the audit line. */
        logPrompts: z._default(z.boolean(), false),
      })
      .check(
        z.refine(
          (a) =>
            (a.baseUrl === undefined) === (a.apiKey === undefined) &&
            (a.baseUrl === undefined) === (a.model === undefined),
          { message: 'set baseUrl, apiKey and model together (or none of them to keep AI off)' },
        ),
      ),
    {},
  ),
  /** The documents API for the host app's save path, and orphaned files (docs/documents.md). */
  /** Word documents imported as HTML by the editor's word import action (docs/word.md). */
  word: z.prefault(
    z.strictObject({
      /** Most pictures one document may bring; past it the import is refused. */
      maxPictures: z._default(int(0, 10_000), 200),
      /** The whole conversion (a .doc through LibreOffice, then the .docx), from when it is queued. */
      timeoutSeconds: z._default(int(2, 600), 60),
      /** Documents converted at once; the others wait (UE_BUSY past `maxQueued`). */
      concurrency: z._default(int(1, 16), 2),
      maxQueued: z._default(int(1), 16),
      /** The unpacked parts of one .docx together, counted as they unpack. */
      maxUnpackedBytes: z._default(size(int(1_048_576)), 209_715_200),
      /** Largest unpacked/packed ratio of one part (a zip bomb packs far tighter). */
      maxRatio: z._default(int(2, 100_000), 200),
      /** Most parts (zip entries) one .docx may have. */
      maxEntries: z._default(int(10, 100_000), 2000),
      /**
       * Convert `.doc` even where LibreOffice cannot be cut off from the network (not root): only
       * for a server that has no network itself, as LibreOffice fetches linked pictures.
       */
      docWithNetwork: z._default(z.boolean(), false),
    }),
    {},
  ),
  documents: z.prefault(
    z.strictObject({
      /** Off: existing libraries are untouched; on: tracking starts (once) and orphans can be found. */
      enabled: z._default(z.boolean(), false),
      /** Largest article a save may send. */
      maxBodyBytes: z._default(size(int(1024, 67_108_864)), 4_194_304),
      /** A file no document references becomes an orphan this long after it was stored. */
      orphanGrace: z._default(duration, '7d'),
      /** How often each node removes orphans by itself; absent: never (use `files orphans --fix`). */
      sweepInterval: z.optional(duration),
      /**
       * Hosts whose https pages an article may embed in an `iframe` (video players); none: every
       * iframe is removed.
       */
      iframeHosts: z._default(z.array(hostName), []),
      /** Elements open inside one another that a saved article may have; deeper is refused. */
      maxDepth: z._default(int(16, 4_096), 256),
      /** Elements a saved article may have in all; more is refused. */
      maxElements: z._default(int(1_000, 10_000_000), 100_000),
      /** Worker threads that clean articles, started by the first save. */
      workers: z._default(int(1, 16), 2),
      /** The longest one article may take to clean; its worker is then terminated. */
      timeoutMs: z._default(int(100, 60_000), 1_500),
      /** Saves waiting for a worker at most; more are refused with UE_BUSY. */
      maxQueue: z._default(int(1, 1_000), 16),
    }),
    {},
  ),
  /** Uploads straight to the S3 bucket, signed by this server (docs/uploads.md). */
  direct: z.prefault(
    z.strictObject({
      /** Serve `routes.s3` when storage is S3; with local storage it is never served. */
      enabled: z._default(z.boolean(), true),
      /** How long a signed POST policy or part URL stays valid. */
      signedUrlSeconds: z._default(int(60, 3_600), 600),
    }),
    {},
  ),
  /** The opt-in delete action: a user deletes their own stored file by its URL. */
  delete: z.prefault(
    z.strictObject({
      enabled: z._default(z.boolean(), false),
      actionName: z._default(actionName, 'deletefile'),
    }),
    {},
  ),
  /** Events for the host app as signed JSON POSTs (docs/events.md): off until url is set. */
  webhooks: z.prefault(
    z
      .strictObject({
        /** Where every event is posted; operator-trusted, http or https only. */
        url: z.optional(z.url({ protocol: /^https?$/ }).check(z.maxLength(2048))),
        /** The HMAC key of `X-Ueditor-Signature`; required with `url`. */
        secret: z.optional(
          z.string().check(z.minLength(16, 'must be at least 16 characters'), z.maxLength(4096)),
        ),
        /** One attempt: connect, answer and body. */
        timeoutMs: z._default(int(100, 300_000), 10_000),
        /** The wait after the first failure; it doubles per attempt, with jitter. */
        retryBaseMs: z._default(int(10, 3_600_000), 1_000),
        /** The longest wait between two attempts. */
        retryMaxMs: z._default(int(10, 86_400_000), 600_000),
        /** An event still failing this long after its change is given up (logged at error). */
        maxAgeMs: z._default(int(1_000), 259_200_000),
        /** How often each node looks for due events (retries, events of other nodes). */
        pollMs: z._default(int(10, 600_000), 1_000),
        /** Events one node delivers at once. */
        concurrency: z._default(int(1, 64), 4),
      })
      .check(
        z.refine((w) => w.url === undefined || w.secret !== undefined, {
          message:
            'a webhook url needs a secret (webhooks.secret, UEDITOR_WEBHOOK_SECRET) to sign with',
          path: ['secret'],
        }),
        z.refine((w) => w.retryBaseMs <= w.retryMaxMs, {
          message: 'retryBaseMs must not exceed retryMaxMs',
          path: ['retryBaseMs'],
        }),
      ),
    {},
  ),
})

export type ServerConfigInput = z.input<typeof ServerConfigSchema>
export type ParsedServerConfig = z.infer<typeof ServerConfigSchema>
