import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from './helpers/test.js'

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url))

interface Packed {
  name: string
  version: string
  files: { path: string; mode: number }[]
}

/** What `npm pack` would put in the tarball, without writing it. */
function packList(dir: string): Packed {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: `${ROOT}${dir}`,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  return (JSON.parse(out) as Packed[])[0] as Packed
}

const manifest = (dir: string) =>
  JSON.parse(readFileSync(`${ROOT}${dir}/package.json`, 'utf8')) as {
    version: string
    bin?: Record<string, string>
    exports: Record<string, string | { types: string; default: string }>
    dependencies?: Record<string, string>
    optionalDependencies?: Record<string, string>
  }

/** Every file an export, a type entry or a bin names must be in the tarball. */
function assertEntriesPacked(dir: string, paths: Set<string>): void {
  const m = manifest(dir)
  const named: string[] = Object.values(m.bin ?? {})
  for (const target of Object.values(m.exports))
    named.push(...(typeof target === 'string' ? [target] : [target.types, target.default]))
  for (const file of named)
    assert.ok(paths.has(file.replace(/^\.\//, '')), `${dir}: ${file} is not packed`)
}

test('the server tarball holds the compiled code, its types, the bin, README and LICENSE, and no tests, sources or maps', () => {
  const packed = packList('packages/server')
  const paths = new Set(packed.files.map((f) => f.path))
  assertEntriesPacked('packages/server', paths)
  for (const f of ['package.json', 'README.md', 'LICENSE', 'dist/bin/ueditor-server.cjs'])
    assert.ok(paths.has(f), f)
  const stray = [...paths].filter(
    (p) =>
      /(^|\/)tests?\//.test(p) ||
      p.endsWith('.map') ||
      /\.ts$/.test(p.replace(/\.d\.ts$/, '')) ||
      p.startsWith('src/') ||
      p.includes('tsbuildinfo') ||
      p.startsWith('bench') ||
      p.includes('dist/tests'),
  )
  assert.deepEqual(stray, [])
  const main = readFileSync(`${ROOT}packages/server/dist/bin/ueditor-server.cjs`, 'utf8')
  assert.ok(main.startsWith('#!/usr/bin/env node\n'), 'the bin starts with a node shebang')
})

test('the loaders tarball holds the module, its types, both bundles and the example page, and no tests', () => {
  const packed = packList('packages/loaders')
  const paths = new Set(packed.files.map((f) => f.path))
  assertEntriesPacked('packages/loaders', paths)
  for (const f of [
    'README.md',
    'LICENSE',
    'dist/bundle/loaders.min.js',
    'dist/bundle/loaders.iife.min.js',
  ])
    assert.ok(paths.has(f), f)
  assert.deepEqual(
    [...paths].filter((p) => p.includes('tests/') || p.endsWith('.map') || p.startsWith('src/')),
    [],
  )
})

test('both packages share one version, and the server depends on exactly that loaders version', () => {
  const server = manifest('packages/server')
  const loaders = manifest('packages/loaders')
  assert.equal(server.version, loaders.version)
  assert.equal(server.dependencies?.['@ueditor-backend/loaders'], loaders.version)
  assert.ok(
    server.optionalDependencies?.['better-sqlite3'],
    'better-sqlite3 is optional (Node 22.13+ uses node:sqlite)',
  )
  assert.equal(server.dependencies?.['better-sqlite3'], undefined)
  const changelog = readFileSync(`${ROOT}CHANGELOG.md`, 'utf8')
  assert.ok(
    changelog.includes(`## ${server.version}`),
    `CHANGELOG.md has no "## ${server.version}" section`,
  )
})

test('the release pack command creates its destination folder and writes both tarballs there, and git ignores release/', async () => {
  const parent = await mkdtemp(join(tmpdir(), 'ueditor-release-'))
  try {
    const destination = join(parent, 'release')
    const { version } = manifest('packages/server')
    execFileSync('npm', ['run', '--silent', 'release:pack', '--', destination], {
      cwd: ROOT,
      env: { ...process.env, npm_config_ignore_scripts: 'true' },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    assert.deepEqual((await readdir(destination)).sort(), [
      `ueditor-backend-loaders-${version}.tgz`,
      `ueditor-backend-server-${version}.tgz`,
    ])
  } finally {
    await rm(parent, { recursive: true, force: true })
  }
  const ignored = execFileSync('git', ['check-ignore', 'release/x.tgz'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
  assert.equal(ignored.trim(), 'release/x.tgz')
})

/** The relative links of a Markdown text, without their #fragment. */
function relativeLinks(markdown: string): string[] {
  return [...markdown.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => (m[1] as string).replace(/#.*$/, ''))
    .filter((link) => link !== '' && !/^[a-z]+:/i.test(link))
}

for (const dir of ['packages/server', 'packages/loaders']) {
  test(`every link in the README of the ${dir.slice(9)} tarball names a file the tarball holds`, () => {
    const paths = new Set(packList(dir).files.map((f) => f.path))
    const links = relativeLinks(readFileSync(`${ROOT}${dir}/README.md`, 'utf8'))
    assert.ok(links.length > 0, 'the README links to its docs')
    assert.deepEqual(
      links.filter((link) => !paths.has(link)),
      [],
      'links that would not resolve in an installed package',
    )
  })
}

test('every path --help names is a file or folder the server tarball holds', () => {
  const help = execFileSync(
    process.execPath,
    [`${ROOT}packages/server/dist/bin/ueditor-server.cjs`, '--help'],
    { encoding: 'utf8' },
  )
  const packageRoot = `${ROOT}packages/server/`
  const named = [...help.matchAll(/(\/\S+?)[.,]?(?=\s|$)/g)]
    .map((m) => m[1] as string)
    .filter((p) => p.startsWith(packageRoot))
  assert.ok(named.length >= 2, `--help names the docs it points to: ${named.join(', ')}`)
  const paths = [...new Set(packList('packages/server').files.map((f) => f.path))]
  for (const path of named) {
    const inPackage = path.slice(packageRoot.length)
    assert.ok(
      paths.some((p) => p === inPackage || (inPackage.endsWith('/') && p.startsWith(inPackage))),
      `${inPackage} is not in the tarball`,
    )
  }
})
