#!/usr/bin/env node
// Part of `npm run build`: Kysely, zod and prom-client, each bundled into one ES module under
// packages/server/dist/src/vendor/, which the server imports as `#kysely`, `#zod` and
// `#prom-client` (the `imports` of its package.json; their types stay those of the packages).
// Node 20 loads Kysely's 262 and zod's 95 ES modules in about 0.3 s of a start's CPU, and
// prom-client's CommonJS files (with @opentelemetry/api's) in about 50 ms; one module each takes
// a fraction of that (docs/architecture.md, "What loads when"). The packages stay dependencies:
// the bundles are built from the installed versions, whose licences they keep.
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const server = fileURLToPath(new URL('../packages/server/', import.meta.url))
const outdir = join(server, 'dist/src/vendor')
mkdirSync(outdir, { recursive: true })
const bundles = {
  kysely: "export * from 'kysely'\n",
  zod: "export * from 'zod'\nexport { default } from 'zod'\n",
  // CommonJS: a bundle re-exports by name only what it names (what shared/metrics.ts imports).
  'prom-client':
    "export { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'\n",
}
for (const [name, contents] of Object.entries(bundles)) {
  const manifest = [server, join(server, '../..')]
    .map((dir) => join(dir, 'node_modules', name, 'package.json'))
    .find((file) => existsSync(file))
  if (!manifest) throw new Error(`${name} is not installed`)
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
      js:
        `// ${name} ${pkg.version} (${pkg.license} licence, ${pkg.homepage ?? pkg.repository?.url ?? ''}), bundled by scripts/bundle-server-vendor.mjs\n` +
        // What CommonJS code requires (Node's own modules) is required as it would be.
        "import { createRequire as __vendorRequire } from 'node:module'\nconst require = __vendorRequire(import.meta.url)",
    },
    outfile: join(outdir, `${name}.js`),
    logLevel: 'warning',
  })
}
