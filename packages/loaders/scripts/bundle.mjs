// Builds the browser bundles from the compiled ESM. The ES module `loaders.min.js` keeps the
// tus client (tus-js-client's browser build; `platform: 'browser'` picks it) in a chunk of its
// own, `loaders-<name>-<hash>.min.js`, fetched on the first tus upload only, so a page using
// just the designer's loaders never loads it. The IIFE exposing `window.UEditorBackendLoaders`
// is one self-contained file with everything.
import { readdir, rm } from 'node:fs/promises'
import { build } from 'esbuild'

const outdir = new URL('../dist/bundle/', import.meta.url).pathname
const entry = new URL('../dist/src/index.js', import.meta.url).pathname
const common = {
  bundle: true,
  minify: true,
  target: 'es2020',
  platform: 'browser',
  legalComments: 'none',
  logLevel: 'warning',
}
// Chunks of earlier builds carry other hashes: never ship them.
for (const name of await readdir(outdir).catch(() => []))
  if (/^loaders-.+\.min\.js$/.test(name)) await rm(outdir + name)
await build({
  ...common,
  entryPoints: { 'loaders.min': entry },
  format: 'esm',
  splitting: true,
  chunkNames: 'loaders-[name]-[hash].min',
  outdir,
})
await build({
  ...common,
  entryPoints: [entry],
  format: 'iife',
  globalName: 'UEditorBackendLoaders',
  outfile: `${outdir}loaders.iife.min.js`,
})
