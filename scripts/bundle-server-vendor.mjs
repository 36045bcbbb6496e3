#!/usr/bin/env node
// Part of `npm run build`: Kysely and zod/mini, each bundled into one ES module under
// packages/server/dist/src/vendor/, which the server imports as `#kysely` and `#zod` (the
// `imports` of its package.json; their types stay those of the packages). Node 20 loads the
// packages' own 262 and 95 ES modules in about 0.3 s of a start's CPU; one module each takes
// a fifth of that (docs/architecture.md, "What loads when"). The packages stay dependencies:
// the bundles are built from the installed versions, whose licences they keep.
// `#zod` is zod/mini (scripts/zod-mini.mjs).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { ZOD_ENTRY, zodEnglishOnly } from './zod-mini.mjs'

const server = fileURLToPath(new URL('../packages/server/', import.meta.url))
const outdir = join(server, 'dist/src/vendor')
mkdirSync(outdir, { recursive: true })
const bundles = {
  kysely: { pkg: 'kysely', entry: 'kysely', contents: "export * from 'kysely'\n" },
  zod: { pkg: 'zod', entry: 'zod/mini', contents: ZOD_ENTRY },
}
// A package bundled by an earlier build and no longer is must not stay importable.
for (const file of readdirSync(outdir))
  if (!Object.hasOwn(bundles, file.replace(/\.js$/, ''))) rmSync(join(outdir, file))
for (const [name, { pkg: packageName, entry, contents }] of Object.entries(bundles)) {
  const manifest = [server, join(server, '../..')]
    .map((dir) => join(dir, 'node_modules', packageName, 'package.json'))
    .find((file) => existsSync(file))
  if (!manifest) throw new Error(`${packageName} is not installed`)
  const pkg = JSON.parse(readFileSync(manifest, 'utf8'))
  await build({
    stdin: { contents, resolveDir: server, sourcefile: `${name}-entry.js` },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    legalComments: 'inline',
    minifyWhitespace: true,
    minifySyntax: true,
    banner: {
      js: `// ${entry} ${pkg.version} (${pkg.license} licence, ${pkg.homepage ?? pkg.repository?.url ?? ''}), bundled by scripts/bundle-server-vendor.mjs`,
    },
    outfile: join(outdir, `${name}.js`),
    plugins: [zodEnglishOnly],
    logLevel: 'warning',
  })
}
