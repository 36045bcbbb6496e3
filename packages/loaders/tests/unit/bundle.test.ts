import assert from 'node:assert/strict'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const ENTRY = fileURLToPath(new URL('../../src/index.js', import.meta.url))

/** What a page's bundler ships for `import { <names> } from '@ueditor-backend/loaders'`. */
async function shipped(names: string[]): Promise<string> {
  const result = await build({
    stdin: {
      contents: `import { ${names.join(', ')} } from ${JSON.stringify(ENTRY)}\nwindow.used = [${names.join(', ')}]`,
      resolveDir: fileURLToPath(new URL('.', import.meta.url)),
    },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  })
  return result.outputFiles[0]?.text ?? ''
}

test('a page that imports only the materials loaders ships no tus client; one that imports uploadService does', async () => {
  const loadersOnly = await shipped(['createMaterialLoaders'])
  const withUploads = await shipped(['createMaterialLoaders', 'uploadService'])
  assert.doesNotMatch(loadersOnly, /Tus-Resumable/)
  assert.match(withUploads, /Tus-Resumable/)
  assert.ok(loadersOnly.length < 8_000, `${loadersOnly.length} bytes`)
})
