import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from './helpers/test.js'

// Tests run from dist/tests; the rules are about the TypeScript sources.
const SRC = fileURLToPath(new URL('../../src/', import.meta.url))

/** Which of our rooms each room may import, and which packages only one file may import. */
const ROOM_RULES: Record<string, readonly string[]> = {
  shared: [],
  config: ['shared'],
  ingest: ['shared'],
  storage: ['shared'],
  db: ['shared'],
  limits: ['shared', 'db'],
  images: ['shared', 'ingest'],
  http: ['shared', 'storage'],
  auth: ['shared', 'config', 'limits'],
  admission: ['shared', 'config', 'ingest', 'db', 'storage', 'images', 'auth', 'events', 'limits'],
  editor: [
    'admission',
    'shared',
    'config',
    'ingest',
    'db',
    'storage',
    'images',
    'auth',
    'ai',
    'events',
    'limits',
    'word',
  ],
  materials: ['shared', 'config', 'db', 'auth'],
  formula: ['shared', 'images', 'limits'],
  ai: ['shared', 'db', 'limits'],
  events: ['shared', 'db'],
  documents: ['shared', 'config', 'ingest', 'db', 'storage', 'auth'],
  uploads: ['shared', 'config', 'ingest', 'db', 'storage', 'images', 'auth', 'admission'],
  word: ['shared', 'config', 'images', 'documents'],
}
/**
 * Every package the server source uses, and the files (or whole rooms, with a trailing `/`)
 * that may use it. A package missing here fails the test, so none is used outside its room
 * unseen.
 */
const PACKAGE_OWNERS: Record<string, readonly string[]> = {
  'better-sqlite3': ['db/open.ts'],
  pg: ['db/open-postgres.ts', 'db/postgres-reads.ts'],
  '@aws-sdk/client-s3': ['storage/s3.ts', 'storage/s3-direct.ts'],
  '@aws-sdk/s3-presigned-post': ['storage/s3-direct.ts'],
  '@aws-sdk/s3-request-presigner': ['storage/s3-direct.ts'],
  '@fastify/busboy': ['ingest/multipart.ts'],
  'file-type': ['ingest/sniff.ts'],
  sharp: ['images/sharp-lib.ts', 'images/sharp.ts', 'images/svg-raster.ts'],
  '@mathjax/src': ['formula/mathjax.ts'],
  '@mathjax/mathjax-newcm-font': ['formula/mathjax.ts'],
  'lru-cache': ['formula/handler.ts', 'db/file-index.ts'],
  undici: ['ingest/remote/fetch-image.ts', 'events/webhooks.ts'],
  // The one IP parser, in the four files that read addresses (docs/architecture.md).
  'ipaddr.js': [
    'ingest/remote/guard.ts',
    'http/client-address.ts',
    'limits/client-key.ts',
    'config/schema.ts',
  ],
  kysely: ['db/'],
  'rate-limiter-flexible': ['limits/limiter.ts'],
  zod: ['config/', 'materials/', 'ai/request.ts'],
  openai: ['ai/model-client.ts'],
  'sanitize-html': ['materials/sanitize.ts', 'documents/sanitize.ts', 'documents/article-urls.ts'],
  pino: ['shared/log.ts'],
  'pino-pretty': ['shared/log.ts'],
  'prom-client': ['shared/metrics.ts'],
  jose: ['auth/jwt.ts'],
  '@ueditor-backend/loaders': ['http/assets.ts'],
  '@tus/server': ['uploads/tus/'],
  '@tus/utils': ['uploads/tus/'],
  '@tus/file-store': ['uploads/tus/'],
  '@tus/s3-store': ['uploads/tus/'],
  mammoth: ['word/docx-html.ts'],
  yauzl: ['word/package.ts'],
}
/** Host frameworks (peer dependencies): their adapters import their types, never their code. */
const TYPE_ONLY_PACKAGES: Record<string, readonly string[]> = {
  fastify: ['http/fastify.ts'],
}

interface Import {
  specifier: string
  typeOnly: boolean
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f))
}

/** Static imports and re-exports, dynamic imports, and packages resolved with `createRequire`. */
export function importsOf(text: string): Import[] {
  const pattern =
    /(?:^|\n)\s*(import|export)(\s+type\b)?[^'"]*?from\s+'([^']+)'|import\('([^']+)'\)|require\([^)]*\)\.resolve\('([^']+)'\)/g
  return [...text.matchAll(pattern)].map((m) => ({
    specifier: (m[3] ?? m[4] ?? m[5]) as string,
    typeOnly: m[2] !== undefined,
  }))
}

/** `#kysely` and `#zod` (package.json `imports`) are the bundles of those two packages. */
function packageOf(specifier: string): string {
  if (specifier.startsWith('#')) return specifier.slice(1)
  const parts = specifier.split('/')
  return (specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]) as string
}

/** What `rel` (a path below src/) imports that its room may not. */
export function violationsOf(rel: string, imports: readonly Import[]): string[] {
  const violations: string[] = []
  const room = rel.includes('/') ? (rel.split('/')[0] as string) : null
  for (const { specifier, typeOnly } of imports) {
    if (specifier.startsWith('node:')) continue
    if (specifier.startsWith('.')) {
      if (!room || !(room in ROOM_RULES)) continue
      const target = join(rel, '..', specifier).replaceAll('\\', '/')
      const targetRoom = target.includes('/') ? target.split('/')[0] : '(root)'
      if (targetRoom !== room && !ROOM_RULES[room]?.includes(targetRoom as string))
        violations.push(`${rel} imports ${target}`)
      continue
    }
    const name = packageOf(specifier)
    const owners = PACKAGE_OWNERS[name] ?? (typeOnly ? TYPE_ONLY_PACKAGES[name] : undefined)
    if (!owners) violations.push(`${rel} imports package ${specifier}, which no room owns`)
    else if (!owners.some((o) => rel.startsWith(o)))
      violations.push(`${rel} imports package ${specifier}`)
  }
  return violations
}

test('each room imports only the rooms and packages its rules allow', () => {
  const violations = sourceFiles(SRC).flatMap((file) =>
    violationsOf(relative(SRC, file).replaceAll('\\', '/'), importsOf(readFileSync(file, 'utf8'))),
  )
  assert.deepEqual(violations, [])
})

test('every runtime dependency of the server has owners, and every owned package is one', () => {
  const manifest = JSON.parse(readFileSync(join(SRC, '../package.json'), 'utf8')) as {
    dependencies?: Record<string, string>
    optionalDependencies?: Record<string, string>
    peerDependencies?: Record<string, string>
  }
  const runtime = Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })
  assert.deepEqual(runtime.sort(), Object.keys(PACKAGE_OWNERS).sort())
  for (const name of Object.keys(TYPE_ONLY_PACKAGES))
    assert.ok(name in (manifest.peerDependencies ?? {}), `${name} is not a peer dependency`)
})

test('the checker refuses an unknown package, a package outside its owners and a forbidden room', () => {
  const text = [
    "import leftPad from 'left-pad'",
    "import ipaddr from 'ipaddr.js'",
    "import { Kysely } from 'kysely'",
    "const sdk = await import('@aws-sdk/client-s3')",
    "import type { FastifyReply } from 'fastify'",
    "import { createUeditorServer } from '../server.js'",
    "import { readFile } from 'node:fs/promises'",
    "import { UeError } from '../shared/errors.js'",
  ].join('\n')
  assert.deepEqual(violationsOf('materials/x.ts', importsOf(text)), [
    'materials/x.ts imports package left-pad, which no room owns',
    'materials/x.ts imports package ipaddr.js',
    'materials/x.ts imports package kysely',
    'materials/x.ts imports package @aws-sdk/client-s3',
    'materials/x.ts imports package fastify',
    'materials/x.ts imports server.js',
  ])
  // Every way of uploading goes through admission/, never through the editor's modules.
  assert.deepEqual(
    violationsOf(
      'uploads/tus/x.ts',
      importsOf("import { checkQuota } from '../../editor/store.js'"),
    ),
    ['uploads/tus/x.ts imports editor/store.js'],
  )
  assert.deepEqual(violationsOf('http/x.ts', importsOf("import fastify from 'fastify'")), [
    'http/x.ts imports package fastify, which no room owns',
  ])
})

test('every test file of both packages takes test() and its hooks from its helpers, which give each a deadline', () => {
  const packages = fileURLToPath(new URL('../../../', import.meta.url))
  const offenders = ['server', 'loaders'].flatMap((pkg) => {
    const root = join(packages, pkg, 'tests')
    return readdirSync(root, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts') && f !== join('helpers', 'test.ts'))
      .filter((f) =>
        /import \{[^}]*\b(test|it|before|after|beforeEach|afterEach)\b[^}]*\} from 'node:test'/.test(
          readFileSync(join(root, f), 'utf8'),
        ),
      )
      .map((f) => `${pkg}/tests/${f}`)
  })
  assert.deepEqual(
    offenders,
    [],
    'import { test, before, after } from the helpers/test.js of the package',
  )
})

test('every package the tests of a package import is declared in that package.json', () => {
  const packages = fileURLToPath(new URL('../../../', import.meta.url))
  const offenders = ['server', 'loaders'].flatMap((pkg) => {
    const manifest = JSON.parse(readFileSync(join(packages, pkg, 'package.json'), 'utf8'))
    const declared = new Set<string>([
      manifest.name,
      ...['dependencies', 'optionalDependencies', 'peerDependencies', 'devDependencies'].flatMap(
        (field) => Object.keys(manifest[field] ?? {}),
      ),
      // The package's own import map (`#kysely`): what it names is declared above.
      ...Object.keys(manifest.imports ?? {}),
    ])
    const root = join(packages, pkg, 'tests')
    return readdirSync(root, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) =>
        // Static imports only: a dynamic import of a missing package is some tests' subject.
        [
          ...readFileSync(join(root, f), 'utf8').matchAll(
            /^(?:import|export|\}) .*from '([^'.][^']*)'/gm,
          ),
        ]
          .map((m) =>
            (m[1] as string)
              .split('/')
              .slice(0, m[1]?.startsWith('@') ? 2 : 1)
              .join('/'),
          )
          .filter((name) => !name.startsWith('node:') && !declared.has(name))
          .map((name) => `${pkg}/tests/${f} imports ${name}`),
      )
  })
  assert.deepEqual([...new Set(offenders)], [], 'declare them in devDependencies')
})
