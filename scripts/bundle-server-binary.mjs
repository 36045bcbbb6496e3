#!/usr/bin/env node
// Part of `npm run build`, after tsc: the `ueditor-server` binary under packages/server/dist/bin/,
// built from the compiled modules. Node 20 spends about 40% of a start loading the server's ~190
// modules one file at a time, and most of the rest compiling them (docs/architecture.md, "What
// loads when"). The library the mounts import stays the compiled modules.
//
// - `server.cjs`: the server in one CommonJS file. A feature's modules are still initialised
//   with its first use (esbuild keeps what an `import()` loads behind an init function), but the
//   file is read and compiled once; scripts/save-server-code-cache.mjs then saves V8's code
//   cache of a start beside it.
// - `ueditor-server.cjs`: the bin, scripts/server-binary-loader.cjs, which runs server.cjs with
//   that cache. The bundle's `import()`s of packages call the loader's (`__ueImport`).
// - Packages stay packages, imported at run time, except those every start loads (START): they
//   are bundled with what they import. Optional packages, native ones and those a request loads
//   first are looked up in node_modules as before, so an absent optional package is still
//   named by the server and by doctor.
// - `#zod` is built here from zod/mini itself, as the vendor bundle is (scripts/zod-mini.mjs), so
//   only the part of zod the server's schemas use is bundled (60 KB of the vendor bundle's 250).
// - Worker threads start from a file: each worker module is an ES module entry of its own,
//   emitted beside the bundle under the name the code gives it
//   (`new URL('./worker.js', import.meta.url)`), with the chunks the workers share.
import { chmodSync, copyFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
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
const MAIN = 'standalone/main.js'
const WORKERS = {
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

/** What both builds share: the compiled modules, and which packages come into the bundle. */
const common = {
  outdir,
  absWorkingDir: server,
  bundle: true,
  platform: 'node',
  target: 'node20',
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  plugins: [zodFromItsPackage, zodEnglishOnly, promClientParts, packagesOnlyWhereNeeded],
  // From the package itself, not the one-module copy the compiled modules import: Kysely marks
  // its modules free of side effects, so the dialects and builders the server never uses are
  // left out.
  alias: { '#kysely': 'kysely' },
  metafile: true,
  logLevel: 'warning',
}

rmSync(outdir, { recursive: true, force: true })
const serverBuild = await build({
  ...common,
  entryPoints: { server: join(compiled, MAIN) },
  format: 'cjs',
  outExtension: { '.js': '.cjs' },
  define: { 'import.meta.url': '__ueImportMetaUrl' },
  banner: { js: "const __ueImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
})
const workerBuild = await build({
  ...common,
  entryPoints: Object.fromEntries(
    Object.entries(WORKERS).map(([name, file]) => [name, join(compiled, file)]),
  ),
  splitting: true,
  format: 'esm',
  chunkNames: 'chunk-[hash]',
  // The bundled CommonJS packages require Node's modules (and KEEP) at run time.
  banner: {
    js: "import { createRequire as __ueCreateRequire } from 'node:module'; const require = __ueCreateRequire(import.meta.url);",
  },
})

// The loader runs the bundle; its packages' `import()`s go through the loader's.
const bundlePath = join(outdir, 'server.cjs')
let imports = 0
const bundle = readFileSync(bundlePath, 'utf8')
  .replace(/^#!.*\n/, '')
  .replace(/\bimport\(("[^"]+")\)/g, (_, specifier) => {
    imports += 1
    return `__ueImport(${specifier})`
  })
if (imports === 0 || /\bimport\(/.test(bundle))
  throw new Error("dist/bin/server.cjs: an import() was not turned into the loader's")
writeFileSync(bundlePath, bundle)
chmodSync(bundlePath, 0o644)
copyFileSync(
  fileURLToPath(new URL('./server-binary-loader.cjs', import.meta.url)),
  join(outdir, 'ueditor-server.cjs'),
)
chmodSync(join(outdir, 'ueditor-server.cjs'), 0o755)

// A worker the code starts by a name no entry was emitted under would fail only when first used.
const emitted = new Set(readdirSync(outdir))
for (const file of emitted) {
  const text = readFileSync(join(outdir, file), 'utf8')
  const started = /new URL\("\.\/([^"]+)",\s*(?:import\.meta\.url|__ueImportMetaUrl)\)/g
  for (const [, name] of text.matchAll(started))
    if (!emitted.has(name))
      throw new Error(`dist/bin/${file} starts ./${name}, which is not emitted`)
}

// The bundled packages' licences, as their licences ask to be kept with copies of them.
const bundled = new Map()
for (const input of [serverBuild, workerBuild].flatMap((b) => Object.keys(b.metafile.inputs))) {
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
