import assert from 'node:assert/strict'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { test } from '../helpers/test.js'

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

test('the prebuilt ES module leaves the tus client to a chunk it loads on demand; the IIFE holds everything', async () => {
  const folder = fileURLToPath(new URL('../../bundle/', import.meta.url))
  const read = (name: string) => readFile(join(folder, name), 'utf8')
  const entry = await read('loaders.min.js')
  const chunks = (await readdir(folder)).filter((n) => /^loaders-.+\.min\.js$/.test(n))
  assert.doesNotMatch(entry, /Tus-Resumable/)
  const tus = []
  for (const name of chunks) if (/Tus-Resumable/.test(await read(name))) tus.push(name)
  assert.equal(tus.length, 1, `one chunk holds the tus client: ${chunks.join(', ')}`)
  assert.ok(entry.includes(`import("./${tus[0]}")`), 'and the entry imports it lazily')
  assert.match(await read('loaders.iife.min.js'), /Tus-Resumable/)
})
