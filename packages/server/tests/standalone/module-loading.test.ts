import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Finished, runToEnd } from '../helpers/cli.js'
import { listeningUrl, untilReady } from '../helpers/server-process.js'
import { tempDir } from '../helpers/temp-dir.js'
import { test } from '../helpers/test.js'

const MAIN = fileURLToPath(new URL('../../bin/ueditor-server.cjs', import.meta.url))
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

/**
 * Which of the bundle's modules ran, from the V8 coverage a process wrote to `dir`
 * (`NODE_V8_COVERAGE`). The bundle keeps each module that an `import()` loads behind an init
 * function named by the module's path (`dist/src/standalone/serve.js`); a module whose init
 * never ran was never initialised.
 */
function bundleModulesRun(dir: string): Map<string, boolean> {
  const run = new Map<string, boolean>()
  for (const file of readdirSync(dir)) {
    const report = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
      result: { url: string; functions: { functionName: string; ranges: { count: number }[] }[] }[]
    }
    for (const script of report.result.filter((s) => s.url.endsWith('/dist/bin/server.cjs')))
      for (const fn of script.functions)
        if (fn.functionName.startsWith('dist/src/'))
          run.set(fn.functionName, (fn.ranges[0]?.count ?? 0) > 0)
  }
  return run
}

/** Asserts that each of `modules` is in the bundle and was not initialised. */
function assertNotRun(run: Map<string, boolean>, modules: string[], when: string): void {
  for (const module of modules) {
    assert.ok(run.has(module), `${module} is not a module the bundle loads later`)
    assert.equal(run.get(module), false, `${when} ran ${module}`)
  }
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
    assert.match(text, /dist\/bin\/ueditor-server\.cjs/)
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
  "a server started on the defaults runs none of the editor's actions, the upload admission or the materials API until a request uses them",
  DEADLINE,
  async (t) => {
    const dir = await tempDir(t, 'ueditor-loading-')
    const coverage = join(dir, 'coverage')
    await serveUntilReady({ UEDITOR_DATA_DIR: join(dir, 'data'), NODE_V8_COVERAGE: coverage }, dir)
    const run = bundleModulesRun(coverage)
    assert.equal(run.get('dist/src/server.js'), true, 'the coverage is read')
    assertNotRun(
      run,
      [
        'dist/src/editor/dispatch.js',
        'dist/src/editor/actions/upload.js',
        'dist/src/admission/admit.js',
        'dist/src/materials/routes.js',
        'dist/src/materials/service.js',
        'dist/src/word/importer.js',
        'dist/src/standalone/doctor.js',
      ],
      'a start',
    )
  },
)

test(
  '--version and --help run none of the server: no database, config schema or logger',
  DEADLINE,
  async (t) => {
    const dir = await tempDir(t, 'ueditor-loading-')
    for (const flag of ['--version', '--help']) {
      const record = join(dir, `${flag}.txt`)
      const coverage = join(dir, `${flag}-coverage`)
      const out = await runWatched(
        [flag],
        { UE_TEST_MODULES_RECORD: record, NODE_V8_COVERAGE: coverage },
        dir,
      )
      assert.equal(out.code, 0, out.stderr)
      assert.deepEqual([...packagesIn(record)], [], flag)
      const run = bundleModulesRun(coverage)
      assert.equal(run.get('dist/src/standalone/args.js'), true, `${flag}: the coverage is read`)
      assertNotRun(
        run,
        [
          'dist/src/standalone/serve.js',
          'dist/src/server.js',
          'dist/src/config/schema.js',
          'dist/src/shared/log.js',
          'dist/src/db/open.js',
        ],
        flag,
      )
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
