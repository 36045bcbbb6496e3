// What `#zod` is, for both bundles of the build: zod/mini with the English messages classic zod
// sets by itself (mini sets none, so every issue would read "Invalid input"). zod's other
// locales, half of the package's code, are left out: `z.locales` holds `en` only.
import { sep } from 'node:path'

export const ZOD_ENTRY = [
  "import { config, locales } from 'zod/mini'",
  'config(locales.en())',
  "export * from 'zod/mini'",
  '',
].join('\n')

/** esbuild plugin: zod's `locales` namespace (of zod/mini and of its core) with English alone. */
export const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, ({ importer, resolveDir }) =>
      importer.includes(`${sep}node_modules${sep}zod${sep}`)
        ? { path: 'en', namespace: 'zod-locales', pluginData: resolveDir }
        : undefined,
    )
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, ({ pluginData }) => ({
      contents: "export { default as en } from '../locales/en.js'\n",
      resolveDir: pluginData,
    }))
  },
}
