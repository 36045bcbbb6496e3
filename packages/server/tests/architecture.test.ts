import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

// Tests run from dist/tests; the rules are about the TypeScript sources.
const SRC = fileURLToPath(new URL('../../src/', import.meta.url))

/** Which of our rooms each room may import, and which packages only one file may import. */
const ROOM_RULES: Record<string, readonly string[]> = {
  shared: [],
  config: ['shared'],
  ingest: ['shared'],
  storage: ['shared'],
  db: ['shared'],
  images: ['shared', 'ingest'],
  http: ['shared', 'storage'],
  auth: ['shared', 'config'],
  editor: ['shared', 'config', 'ingest', 'db', 'storage', 'images', 'auth', 'ai'],
  materials: ['shared', 'config', 'db', 'auth'],
  formula: ['shared', 'images'],
  ai: ['shared'],
}
const PACKAGE_OWNERS: Record<string, readonly string[]> = {
  'better-sqlite3': ['db/open.ts'],
  pg: ['db/open.ts'],
  '@aws-sdk/client-s3': ['storage/s3.ts'],
  '@fastify/busboy': ['ingest/multipart.ts'],
  'file-type': ['ingest/sniff.ts'],
  sharp: ['images/sharp.ts', 'images/svg-raster.ts'],
  '@mathjax/src': ['formula/mathjax.ts'],
  '@mathjax/mathjax-newcm-font': ['formula/mathjax.ts'],
  'lru-cache': ['formula/handler.ts', 'db/file-index.ts'],
  undici: ['ingest/remote/fetch-image.ts'],
  kysely: ['db/'],
  zod: ['config/', 'materials/', 'ai/request.ts'],
  openai: ['ai/model-client.ts'],
  'sanitize-html': ['materials/sanitize.ts'],
  pino: ['shared/log.ts'],
  'pino-pretty': ['shared/log.ts'],
  'prom-client': ['shared/metrics.ts'],
  jose: ['auth/jwt.ts'],
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f))
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  return [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+'([^']+)'|import\('([^']+)'\)/g),
  ].map((m) => (m[1] ?? m[2]) as string)
}

test('each room imports only the rooms and packages its rules allow', () => {
  const violations: string[] = []
  for (const file of sourceFiles(SRC)) {
    const rel = relative(SRC, file).replaceAll('\\', '/')
    const room = rel.includes('/') ? (rel.split('/')[0] as string) : null
    for (const spec of importsOf(file)) {
      if (spec.startsWith('.')) {
        if (!room || !(room in ROOM_RULES)) continue
        const target = relative(SRC, join(file, '..', spec)).replaceAll('\\', '/')
        const targetRoom = target.includes('/') ? target.split('/')[0] : '(root)'
        if (targetRoom !== room && !ROOM_RULES[room]?.includes(targetRoom as string))
          violations.push(`${rel} imports ${target}`)
        continue
      }
      const owners =
        PACKAGE_OWNERS[
          spec.startsWith('@')
            ? spec.split('/').slice(0, 2).join('/')
            : (spec.split('/')[0] as string)
        ]
      if (owners && !owners.some((o) => rel.startsWith(o)))
        violations.push(`${rel} imports package ${spec}`)
    }
  }
  assert.deepEqual(violations, [])
})
