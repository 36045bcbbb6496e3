#!/usr/bin/env node
// Part of `npm run build`, after tsc: the `ueditor-server` binary as one bundle under
// packages/server/dist/bin/, built from the compiled modules. Node 20 spends about 40% of a
// start loading the server's ~190 modules one file at a time; one module graph in a few files
// takes a fraction of that (docs/architecture.md, "What loads when"). The library the mounts
// import stays the compiled modules.
//
// - Every `import()` stays a split point: a feature's code loads with its first use, as in the
//   compiled modules.
// - Packages stay packages, imported at run time, except those every start loads (START): they
//   are bundled with what they import. Optional packages, native ones and those a request loads
//   first are looked up in node_modules as before, so an absent optional package is still
//   named by the server and by doctor.
// - `#zod` is built here from zod/mini itself, as the vendor bundle is (scripts/zod-mini.mjs), so
//   only the part of zod the server's schemas use is bundled (60 KB of the vendor bundle's 250).
// - Worker threads start from a file: each worker module is an entry of its own, emitted beside
//   the chunks under the name the code gives it (`new URL('./worker.js', import.meta.url)`).
import { chmodSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { ZOD_ENTRY, zodEnglishOnly } from './zod-mini.mjs'

const server = fileURLToPath(new URL('../packages/server/', import.meta.url))
const compiled = join(server, 'dist/src')
const outdir = join(server, 'dist/bin')

/** The packages every start loads; they come into the bundle with all they import. */
const START = new Set(['pino', 'prom-client', 'lru-cache', 'ipaddr.js', 'kysely', 'zod'])
/** Imported by a bundled package, but kept a package: pino's transports start it from its files. */
const KEEP = new Set(['thread-stream'])
const WORKERS = {
  'ueditor-server': 'standalone/main.js',
  worker: 'formula/worker.js',
  'docx-worker': 'word/docx-worker.js',
  'clean-worker': 'documents/clean-worker.js',
}

const packageName = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/')

const packagesOnlyWhereNeeded = {
  name: 'packages-only-where-needed',
  setup(b) {
    b.onResolve({ filter: /^[^./#]/ }, ({ path, importer }) => {
      if (path.startsWith('node:')) return { external: true }
      const name = packageName(path)
      if (KEEP.has(name)) return { external: true }
      const fromBundledPackage = importer.includes(`${sep}node_modules${sep}`)
      return fromBundledPackage || START.has(name) ? undefined : { external: true }
    })
  },
}

const zodFromItsPackage = {
  name: 'zod-from-its-package',
  setup(b) {
    b.onResolve({ filter: /^#zod$/ }, () => ({ path: 'zod', namespace: 'zod-entry' }))
    b.onLoad({ filter: /.*/, namespace: 'zod-entry' }, () => ({
      contents: ZOD_ENTRY,
      resolveDir: server,
    }))
  },
}

/** The classes and function of prom-client the server uses (shared/metrics.ts). */
const PROM_CLIENT_PARTS = {
  Registry: 'registry',
  Counter: 'counter',
  Gauge: 'gauge',
  Histogram: 'histogram',
  collectDefaultMetrics: 'defaultMetrics',
}

// prom-client's index requires every part it has, its cluster aggregator (node:cluster) and its
// Pushgateway (node:https) among them; the server uses five.
const promClientParts = {
  name: 'prom-client-parts',
  setup(b) {
    b.onResolve({ filter: /^prom-client$/ }, ({ importer }) =>
      importer.includes(`${sep}node_modules${sep}`)
        ? undefined
        : { path: 'prom-client', namespace: 'prom-client-parts' },
    )
    b.onLoad({ filter: /.*/, namespace: 'prom-client-parts' }, () => ({
      contents: Object.entries(PROM_CLIENT_PARTS)
        .map(([name, file]) => `exports.${name} = require('prom-client/lib/${file}.js')\n`)
        .join(''),
      resolveDir: server,
    }))
  },
}

rmSync(outdir, { recursive: true, force: true })
const result = await build({
  entryPoints: Object.fromEntries(
    Object.entries(WORKERS).map(([name, file]) => [name, join(compiled, file)]),
  ),
  outdir,
  absWorkingDir: server,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunk-[hash]',
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  // The bundled CommonJS packages require Node's modules (and KEEP) at run time.
  banner: {
    js: "import { createRequire as __ueCreateRequire } from 'node:module'; const require = __ueCreateRequire(import.meta.url);",
  },
  plugins: [zodFromItsPackage, zodEnglishOnly, promClientParts, packagesOnlyWhereNeeded],
  // From the package itself, not the one-module copy the compiled modules import: Kysely marks
  // its modules free of side effects, so the dialects and builders the server never uses are
  // left out.
  alias: { '#kysely': 'kysely' },
  metafile: true,
  logLevel: 'warning',
})

// A worker the code starts by a name no entry was emitted under would fail only when first used.
const emitted = new Set(readdirSync(outdir))
for (const file of emitted) {
  const text = readFileSync(join(outdir, file), 'utf8')
  for (const [, name] of text.matchAll(/new URL\("\.\/([^"]+)",\s*import\.meta\.url\)/g))
    if (!emitted.has(name))
      throw new Error(`dist/bin/${file} starts ./${name}, which is not emitted`)
}
chmodSync(join(outdir, 'ueditor-server.js'), 0o755)

// The bundled packages' licences, as their licences ask to be kept with copies of them.
const bundled = new Map()
for (const input of Object.keys(result.metafile.inputs)) {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input)
  if (!m || bundled.has(m[1])) continue
  const dir = input.slice(0, m.index + m[0].length)
  const pkg = JSON.parse(readFileSync(join(server, dir, 'package.json'), 'utf8'))
  const licence = readdirSync(join(server, dir)).find((f) => /^licen[cs]e/i.test(f))
  bundled.set(m[1], {
    version: pkg.version,
    license: pkg.license,
    text: licence ? readFileSync(join(server, dir, licence), 'utf8').trim() : '',
  })
}
writeFileSync(
  join(outdir, 'THIRD-PARTY-LICENSES.txt'),
  `ueditor-server bundles these packages; each one's licence follows its name.\n\n${[...bundled]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, p]) => `==== ${name} ${p.version} (${p.license}) ====\n\n${p.text}\n`)
    .join('\n')}`,
)
