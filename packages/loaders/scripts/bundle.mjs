// Builds the browser bundles from the compiled ESM: one minified ES module and one IIFE
// exposing `window.UEditorBackendLoaders`, both self-contained (tus-js-client's browser build
// is bundled in for `uploadService`; `platform: 'browser'` picks it).
import { build } from 'esbuild'

const common = {
  entryPoints: [new URL('../dist/src/index.js', import.meta.url).pathname],
  bundle: true,
  minify: true,
  target: 'es2020',
  platform: 'browser',
  legalComments: 'none',
  logLevel: 'warning',
}
await build({
  ...common,
  format: 'esm',
  outfile: new URL('../dist/bundle/loaders.min.js', import.meta.url).pathname,
})
await build({
  ...common,
  format: 'iife',
  globalName: 'UEditorBackendLoaders',
  outfile: new URL('../dist/bundle/loaders.iife.min.js', import.meta.url).pathname,
})
