import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Finished, runToEnd } from '../helpers/cli.js'
import { listeningUrl, untilReady } from '../helpers/server-process.js'
import { tempDir } from '../helpers/temp-dir.js'
import { test } from '../helpers/test.js'

const MAIN = fileURLToPath(new URL('../../bin/ueditor-server.js', import.meta.url))
const WATCH = fileURLToPath(new URL('../helpers/module-watch.js', import.meta.url))
const DEADLINE = { timeout: 90_000 }

/** The packages of features a site may leave out (optionalDependencies). */
const OPTIONAL = [
  '@aws-sdk/client-s3',
  '@aws-sdk/s3-presigned-post',
  '@aws-sdk/s3-request-presigner',
  '@tus/s3-store',
  'pg',
  'openai',
  '@mathjax/src',
  '@mathjax/mathjax-newcm-font',
  'pino-pretty',
]
/** Packages of features a default server has on, which load with the first request using them. */
const FIRST_USE = [
  'sharp',
  'undici',
  'jose',
  'file-type',
  '@fastify/busboy',
  'sanitize-html',
  '@tus/server',
  '@tus/file-store',
  'rate-limiter-flexible',
]

/** The npm packages in a record of module-watch.ts, by the node_modules folder of each path. */
function packagesIn(record: string): Set<string> {
  const found = new Set<string>()
  for (const line of readFileSync(record, 'utf8').split('\n')) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(line)
    if (m) found.add(m[1] as string)
  }
  return found
}

/** `ueditor-server <args>` under module-watch.ts, to its end. */
function runWatched(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Finished> {
  return runToEnd(process.execPath, ['--import', WATCH, MAIN, ...args], env, cwd)
}

/** The server under module-watch.ts until `/readyz` answers 200, then stopped with SIGTERM. */
async function serveUntilReady(env: NodeJS.ProcessEnv, cwd: string): Promise<void> {
  const child = spawn(process.execPath, ['--import', WATCH, MAIN], {
    cwd,
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  try {
    let stderr = ''
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    const url = await listeningUrl(child)
    await untilReady(child, url, () => stderr)
    child.kill('SIGTERM')
    assert.equal(await exited, 0, stderr)
  } finally {
    child.kill('SIGKILL')
  }
}

test(
  'a server started on the defaults loads none of the optional packages, nor those of features a request has not used yet',
  DEADLINE,
  async (t) => {
    const dir = await tempDir(t, 'ueditor-loading-')
    const record = join(dir, 'modules.txt')
    await serveUntilReady(
      { UEDITOR_DATA_DIR: join(dir, 'data'), UE_TEST_MODULES_RECORD: record },
      dir,
    )
    const loaded = packagesIn(record)
    // The record is complete: what every start needs is in it.
    assert.ok(loaded.has('better-sqlite3'), 'better-sqlite3')
    // The binary is one bundle: none of the server's compiled modules, nor the packages every
    // start needs, load from their own files.
    const text = readFileSync(record, 'utf8')
    assert.match(text, /dist\/bin\/ueditor-server\.js/)
    assert.doesNotMatch(text, /dist\/src\//)
    for (const bundled of ['kysely', 'zod', 'pino', 'prom-client', 'lru-cache', 'ipaddr.js'])
      assert.ok(!loaded.has(bundled), `${bundled} loaded from its package`)
    assert.deepEqual(
      OPTIONAL.filter((p) => loaded.has(p)),
      [],
      'optional packages load only when a setting turns their feature on',
    )
    assert.deepEqual(
      FIRST_USE.filter((p) => loaded.has(p)),
      [],
      'these load with the first upload, capture, JWT, count taken or material written',
    )
  },
)

test(
  '--version and --help load none of the server: no database, config schema or logger',
  DEADLINE,
  async (t) => {
    const dir = await tempDir(t, 'ueditor-loading-')
    for (const flag of ['--version', '--help']) {
      const record = join(dir, `${flag}.txt`)
      const out = await runWatched([flag], { UE_TEST_MODULES_RECORD: record }, dir)
      assert.equal(out.code, 0, out.stderr)
      assert.deepEqual([...packagesIn(record)], [], flag)
      // The bundle's chunks it loaded hold none of the server, its config schema or the index.
      const chunks = readFileSync(record, 'utf8')
        .split('\n')
        .filter((line) => line.includes('/dist/bin/'))
        .map((line) => readFileSync(fileURLToPath(line), 'utf8'))
      assert.ok(chunks.length > 0, `${flag}: the record names the chunks loaded`)
      for (const name of ['createUeditorServer', 'ServerConfigSchema', 'openMetadataStore'])
        assert.ok(!chunks.some((c) => c.includes(name)), `${flag} loaded ${name}`)
    }
  },
)

const S3_ENV = {
  UEDITOR_STORAGE: 's3',
  UEDITOR_S3_BUCKET: 'uploads',
  // Never reached: the start stops before anything is opened.
  UEDITOR_S3_ENDPOINT: 'http://127.0.0.1:9',
  UEDITOR_S3_ACCESS_KEY_ID: 'id',
  UEDITOR_S3_SECRET_ACCESS_KEY: 'secret',
}

test(
  'with S3 configured and the AWS SDK not installed, the start refuses with UE_DEPENDENCY_MISSING naming the package, before creating anything',
  DEADLINE,
  async (t) => {
    const dir = await tempDir(t, 'ueditor-loading-')
    const out = await runWatched(
      [],
      {
        ...S3_ENV,
        UEDITOR_DATA_DIR: join(dir, 'data'),
        PORT: '0',
        UE_TEST_REFUSE_PACKAGES: '@aws-sdk/client-s3',
      },
      dir,
    )
    assert.equal(out.code, 1, out.stderr)
    assert.equal(
      out.stderr,
      'ueditor-server cannot start (UE_DEPENDENCY_MISSING): a package is not installed:\n' +
        '  - storage.driver "s3" needs the npm package @aws-sdk/client-s3\n' +
        '  Install it (npm install @aws-sdk/client-s3) or turn the setting off.\n',
    )
    assert.equal(existsSync(join(dir, 'data')), false)
  },
)

test(
  'doctor fails a setting whose package is not installed, with the package to install, and leaves out the bucket check',
  DEADLINE,
  async (t) => {
    const dir = await tempDir(t, 'ueditor-loading-')
    const out = await runWatched(
      ['doctor'],
      {
        ...S3_ENV,
        UEDITOR_DATA_DIR: join(dir, 'data'),
        PORT: '0',
        UE_TEST_REFUSE_PACKAGES: '@aws-sdk/client-s3',
      },
      dir,
    )
    assert.equal(out.code, 1, out.stdout + out.stderr)
    assert.ok(
      out.stdout.includes(
        'fail  packages: storage.driver "s3" needs the npm package @aws-sdk/client-s3, which is not installed (UE_DEPENDENCY_MISSING)\n' +
          '      fix: npm install @aws-sdk/client-s3 (an optional dependency this install left out), or turn the setting off\n',
      ),
      out.stdout,
    )
    assert.doesNotMatch(out.stdout, /bucket:/)
    assert.match(out.stdout, /\n1 problem to fix before the server can run\.\n$/)
  },
)

test(
  'the formula renderer, on by default, needs MathJax to start; turned off, the server starts without it',
  DEADLINE,
  async (t) => {
    const dir = await tempDir(t, 'ueditor-loading-')
    const refuse = { UE_TEST_REFUSE_PACKAGES: '@mathjax/src,@mathjax/mathjax-newcm-font' }
    const on = await runWatched(
      [],
      { UEDITOR_DATA_DIR: join(dir, 'on'), PORT: '0', ...refuse },
      dir,
    )
    assert.equal(on.code, 1)
    assert.match(
      on.stderr,
      /- formula\.enabled \(on by default\) needs the npm package @mathjax\/src\n/,
    )
    assert.match(on.stderr, /npm install @mathjax\/src @mathjax\/mathjax-newcm-font\)/)
    await serveUntilReady(
      { UEDITOR_DATA_DIR: join(dir, 'off'), UEDITOR_FORMULA_ENABLED: 'false', ...refuse },
      dir,
    )
  },
)

test(
  'pretty logs need pino-pretty when asked for by name; on their own (auto) they fall back to JSON lines',
  DEADLINE,
  async (t) => {
    const dir = await tempDir(t, 'ueditor-loading-')
    const refuse = { UE_TEST_REFUSE_PACKAGES: 'pino-pretty' }
    const named = await runWatched(
      [],
      { UEDITOR_DATA_DIR: join(dir, 'a'), PORT: '0', UEDITOR_LOG_FORMAT: 'pretty', ...refuse },
      dir,
    )
    assert.equal(named.code, 1)
    assert.match(named.stderr, /- logFormat "pretty" needs the npm package pino-pretty\n/)
    const doctor = await runWatched(
      ['doctor'],
      { UEDITOR_DATA_DIR: join(dir, 'a'), PORT: '0', UEDITOR_LOG_FORMAT: 'pretty', ...refuse },
      dir,
    )
    assert.equal(doctor.code, 1)
    assert.match(
      doctor.stdout,
      /^fail {2}packages: logFormat "pretty" needs the npm package pino-pretty/m,
    )
    await serveUntilReady(
      { UEDITOR_DATA_DIR: join(dir, 'b'), UEDITOR_LOG_FORMAT: 'auto', ...refuse },
      dir,
    )
  },
)
