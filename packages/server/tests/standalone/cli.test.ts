import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ENV_VARS } from '../../src/config/env-var-table.js'
import { startServer } from '../../src/standalone/serve.js'
import { runCli, runToEnd } from '../helpers/cli.js'
import { test } from '../helpers/test.js'

const PACKAGE = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../../package.json', import.meta.url)), 'utf8'),
) as { version: string }

async function occupiedPort(t: { after(fn: () => Promise<void>): void }): Promise<number> {
  const blocker: Server = createServer()
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => blocker.close(() => resolve())))
  return (blocker.address() as { port: number }).port
}

test('ueditor-server --version prints the package version', async () => {
  const out = await runCli(['--version'])
  assert.equal(out.code, 0)
  assert.equal(out.stdout, `${PACKAGE.version}\n`)
})

/** Whether this Node's V8 takes the binary's saved code cache, under `flags`. */
async function codeCacheTaken(flags: string[]): Promise<boolean> {
  const loader = fileURLToPath(new URL('../../bin/ueditor-server.cjs', import.meta.url))
  const probe = `process.stdout.write(String(!require(${JSON.stringify(loader)}).compileBundle().cachedDataRejected))`
  const out = await runToEnd(process.execPath, [...flags, '-e', probe])
  assert.equal(out.code, 0, out.stderr)
  return out.stdout === 'true'
}

test('the binary starts from the code cache its build saved, and from its source when V8 cannot take the cache', async () => {
  assert.equal(await codeCacheTaken([]), true)
  // A V8 flag that changes how code is compiled makes V8 refuse a cache made without it.
  const flags = ['--no-lazy-feedback-allocation']
  assert.equal(await codeCacheTaken(flags), false)
  const main = fileURLToPath(new URL('../../bin/ueditor-server.cjs', import.meta.url))
  const out = await runToEnd(process.execPath, [...flags, main, '--version'])
  assert.equal(out.code, 0, out.stderr)
  assert.equal(out.stdout, `${PACKAGE.version}\n`)
})

test('ueditor-server --help lists the commands and every environment variable', async () => {
  const out = await runCli(['--help'])
  assert.equal(out.code, 0)
  const commands = [
    'serve',
    'doctor',
    'materials import',
    'materials export',
    'files reconcile [--fix] [--grace <duration>] [--quiet]',
    'files orphans [--fix] [--grace <duration>] [--quiet]',
    'index backup <file>',
    '--env-file <file>',
    '--version',
  ]
  for (const command of commands) assert.ok(out.stdout.includes(command), command)
  for (const v of [...ENV_VARS.map((e) => e.name), 'UEDITOR_CONFIG'])
    assert.match(out.stdout, new RegExp(`^  ${v} `, 'm'), v)
})

test('files reconcile with a wrong argument or grace exits 2 with its usage and touches nothing', async () => {
  for (const args of [
    ['files'],
    ['files', 'check'],
    ['files', 'reconcile', '--grace', '5x'],
    ['files', 'reconcile', '--grace'],
    ['files', 'orphans', '--grace', '5x'],
    ['files', 'orphans', '--grace'],
    ['files', 'orphans', '--verbose'],
  ]) {
    const out = await runCli(args, { UEDITOR_DATA_DIR: '/nonexistent/ue-data' })
    assert.equal(out.code, 2, args.join(' '))
    assert.match(out.stderr, /Usage: ueditor-server files reconcile/)
  }
})

test('an unknown command or argument exits 2 with the usage', async () => {
  for (const args of [['serv'], ['serve', '--port=1']]) {
    const out = await runCli(args)
    assert.equal(out.code, 2)
    assert.match(
      out.stderr,
      /^Unknown (command "serv"|argument "--port=1")\.\n\nUsage: ueditor-server/,
    )
  }
})

test('a start on a port in use fails before the data folder is created', async (t) => {
  const port = await occupiedPort(t)
  const parent = await mkdtemp(join(tmpdir(), 'ueditor-port-'))
  t.after(() => rm(parent, { recursive: true, force: true }))
  const dataDir = join(parent, 'data')
  await assert.rejects(
    startServer({
      env: {},
      config: { dataDir, logLevel: 'silent', http: { host: '127.0.0.1', port } },
    }),
    (e: NodeJS.ErrnoException) => e.code === 'EADDRINUSE',
  )
  assert.equal(existsSync(dataDir), false, 'the data folder was created')
})

test('the binary names the address in use and writes nothing', async (t) => {
  const port = await occupiedPort(t)
  const dir = await mkdtemp(join(tmpdir(), 'ueditor-port-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const out = await runCli([], { PORT: String(port), UEDITOR_LOG_LEVEL: 'silent' }, dir)
  assert.equal(out.code, 1)
  assert.equal(
    out.stderr,
    `ueditor-server cannot listen on 127.0.0.1:${port}: the port is in use. Stop the other server or choose another port (PORT, http.port); nothing was written.\n`,
  )
  assert.equal(existsSync(join(dir, 'data')), false)
})

const RELATIVE_URLS_WARNING =
  'http.corsOrigins is set (the editor page is on another origin), but the config answer names ' +
  'relative URLs: stored files (/uploads/), formulaConfig.imageUrlTemplate (/formula.svg?{}), ' +
  "uploadTusUrl (/tus); the browser resolves them against the page's origin, not this server's, " +
  'so stored images break, formulas do not render and the AI dialog and resumable uploads get ' +
  "404; set UEDITOR_PUBLIC_URL (publicUrl) to this server's absolute URL of stored files, such " +
  'as https://ue.example.com/uploads/; the formula, AI and upload URLs follow it unless set on ' +
  'their own (docs/deploy.md)'

/** Starts the binary, waits for its banner, stops it with SIGTERM; returns its stderr lines. */
async function startAndStop(env: NodeJS.ProcessEnv): Promise<string[]> {
  const main = fileURLToPath(new URL('../../bin/ueditor-server.cjs', import.meta.url))
  const child = spawn(process.execPath, [main], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve))
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      stderr += chunk
      const listening = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr)
      if (listening) resolve(listening[1] as string)
    })
    child.once('close', () => reject(new Error(`the server ended before listening:\n${stderr}`)))
  })
  // One answered request: the binary is past its start and handles SIGTERM.
  assert.equal((await fetch(`${url}/healthz`)).status, 200)
  child.kill('SIGTERM')
  assert.equal(await closed, 0, stderr)
  return stderr.split('\n')
}

test('a start with CORS origins and relative URLs in the config answer logs a warning naming them and the fix', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ueditor-cors-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const base = { PORT: '0', UEDITOR_DATA_DIR: dir, UEDITOR_LOG_FORMAT: 'json' }
  const cors = { ...base, UEDITOR_CORS_ORIGINS: 'https://www.example.com' }
  const warnings = (lines: string[]) =>
    lines
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: string; msg: string; relative?: string[] })
      .filter((r) => r.level === 'warn')
  assert.deepEqual(
    warnings(await startAndStop(cors)).map((r) => [r.msg, r.relative]),
    [
      [
        RELATIVE_URLS_WARNING,
        [
          'stored files (/uploads/)',
          'formulaConfig.imageUrlTemplate (/formula.svg?{})',
          'uploadTusUrl (/tus)',
        ],
      ],
    ],
  )
  const absolute = { ...cors, UEDITOR_PUBLIC_URL: 'https://ue.example.com/uploads/' }
  assert.deepEqual(warnings(await startAndStop(absolute)), [])
  assert.deepEqual(warnings(await startAndStop(base)), [])
})

test('every command and subcommand prints its usage for --help and -h, exits 0 and touches nothing', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ueditor-help-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const usages: [string[], RegExp][] = [
    [['serve'], /^Usage: ueditor-server \[--env-file <file>\] \[serve\]/],
    [['doctor'], /^Usage: ueditor-server \[--env-file <file>\] doctor/],
    [['materials'], /^Usage: ueditor-server materials import/],
    [['materials', 'import'], /^Usage: ueditor-server materials import/],
    [['materials', 'export'], /^Usage: ueditor-server materials import/],
    [['files'], /^Usage: ueditor-server files reconcile/],
    [['files', 'reconcile'], /^Usage: ueditor-server files reconcile/],
    [['files', 'reconcile', '--fix'], /^Usage: ueditor-server files reconcile/],
    [['files', 'orphans'], /^Usage: ueditor-server files reconcile[\s\S]*files orphans/],
    [['index'], /^Usage: ueditor-server index backup <file>/],
    [['index', 'backup'], /^Usage: ueditor-server index backup <file>/],
  ]
  for (const [args, usage] of usages)
    for (const flag of ['--help', '-h']) {
      const out = await runCli([...args, flag], {}, dir)
      assert.equal(out.code, 0, `${args.join(' ')} ${flag}: ${out.stderr}`)
      assert.match(out.stdout, usage, `${args.join(' ')} ${flag}`)
      assert.equal(out.stderr, '')
    }
  assert.deepEqual(await readdir(dir), [], 'no data folder or index was created')
})

test('a maintenance command run without the service’s settings fails, names the index it looked for and creates nothing', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ueditor-cron-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  for (const args of [
    ['files', 'reconcile'],
    ['files', 'reconcile', '--fix'],
    ['index', 'backup', join(dir, 'backup.db')],
    ['materials', 'export'],
  ]) {
    const out = await runCli(args, {}, dir)
    assert.equal(out.code, 1, args.join(' '))
    assert.equal(out.stdout, '')
    assert.match(out.stderr, new RegExp(`^No index at ${join(dir, 'data', 'ueditor.db')}; `))
    assert.match(out.stderr, /--env-file \/etc\/ueditor\/ueditor\.env/)
  }
  assert.deepEqual(await readdir(dir), [], 'no data folder, index or backup was created')
})

test('--env-file gives a command the service’s settings; variables already set win and are named', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ueditor-envfile-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const server = await startServer({
    env: { UEDITOR_DATA_DIR: join(dir, 'data'), PORT: '0', UEDITOR_LOG_LEVEL: 'silent' },
  })
  await server.close()
  const envFile = join(dir, 'ueditor.env')
  await writeFile(
    envFile,
    `# as systemd reads it\n\nUEDITOR_DATA_DIR=${join(dir, 'data')}\nUEDITOR_LOG_LEVEL="warn"\n; another comment\n`,
  )
  for (const args of [
    ['--env-file', envFile, 'files', 'reconcile'],
    ['files', 'reconcile', '--env-file', envFile],
    ['files', 'reconcile', `--env-file=${envFile}`],
  ]) {
    const out = await runCli(args, {}, '/')
    assert.equal(out.code, 0, out.stderr)
    assert.match(out.stdout, /Checked 0 objects in local storage and 0 index rows/)
    assert.equal(out.stderr, '')
  }
  const overridden = await runCli(['--env-file', envFile, 'files', 'reconcile'], {
    UEDITOR_DATA_DIR: join(dir, 'elsewhere'),
  })
  assert.equal(overridden.code, 1)
  assert.match(
    overridden.stderr,
    new RegExp(`^UEDITOR_DATA_DIR from the environment overrides the value in ${envFile}\n`),
  )

  await writeFile(envFile, `UEDITOR_DATA_DIR=${join(dir, 'data')}\nexport UEDITOR_LOG_LEVEL=warn\n`)
  const shellSyntax = await runCli(['--env-file', envFile, 'files', 'reconcile'])
  assert.equal(shellSyntax.code, 1)
  assert.match(shellSyntax.stderr, new RegExp(`^${envFile}, line 2: expected NAME=value`))

  const missing = await runCli(['files', 'reconcile', '--env-file'])
  assert.equal(missing.code, 2)
  assert.match(missing.stderr, /^--env-file needs a file\./)
})
