import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { png } from '../helpers/fixtures.js'
import { tempDir } from '../helpers/temp-dir.js'
import { test } from '../helpers/test.js'

const MAIN = fileURLToPath(new URL('../../bin/ueditor-server.cjs', import.meta.url))
const TOKENS = 'alice:alice-token-0123456789abcdef'

interface Run {
  child: ChildProcess
  stderr(): string
  /** The URL from the banner, or the exit code when the binary stops before it listens. */
  started: Promise<{ url: string } | { code: number | null }>
  exited: Promise<number | null>
}

/** The binary with PATH, a data folder in `dir`, port 0 and `env`; killed when the test ends. */
function runBinary(
  t: { after(fn: () => void): void },
  dir: string,
  env: NodeJS.ProcessEnv,
  spawnAs: { uid?: number; gid?: number } = {},
): Run {
  const child = spawn(process.execPath, [MAIN], {
    cwd: dir,
    env: { PATH: process.env.PATH, UEDITOR_DATA_DIR: join(dir, 'data'), PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...spawnAs,
  })
  t.after(() => child.kill('SIGKILL'))
  let stderr = ''
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  const started = new Promise<{ url: string } | { code: number | null }>((resolve) => {
    child.stderr?.on('data', (c) => {
      stderr += c
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr)
      if (m) resolve({ url: m[1] as string })
    })
    void exited.then((code) => resolve({ code }))
  })
  return { child, stderr: () => stderr, started, exited }
}

async function urlOf(run: Run): Promise<string> {
  const started = await run.started
  if (!('url' in started)) throw new Error(`exited with ${started.code}:\n${run.stderr()}`)
  return started.url
}

/** The editor's config answer from the started binary. */
async function configAnswerOf(run: Run) {
  return (await fetch(`${await urlOf(run)}/ueditor?action=config`)).json()
}

/** The JSON log lines among what the binary wrote to stderr. */
function logLines(stderr: string): Record<string, unknown>[] {
  return stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
}

test('a misspelt auth variable stops the binary before it listens, naming the variable it meant', async (t) => {
  const dir = await tempDir(t, 'ueditor-startup-')
  const run = runBinary(t, dir, { UEDITOR_AUTH_TOKEN: TOKENS })
  assert.deepEqual(await run.started, { code: 1 })
  const out = run.stderr()
  assert.match(out, /^Invalid configuration:\n/)
  assert.ok(
    out.includes(
      '- unknown variable UEDITOR_AUTH_TOKEN (did you mean UEDITOR_AUTH_TOKENS?): the server does not read it, so what it was meant to set is not in force; rename it, or unset it',
    ),
    out,
  )
  assert.doesNotMatch(out, /alice-token/)
  assert.deepEqual(await readdir(dir), [], 'nothing was written')
})

test('a misspelt size variable and an unknown key deep in the config file stop the start, each with the nearest real name', async (t) => {
  const dir = await tempDir(t, 'ueditor-startup-')
  await writeFile(join(dir, 'ueditor.json'), JSON.stringify({ catcher: { alowHosts: [] } }))
  const run = runBinary(t, dir, {
    UEDITOR_IMAGE_MAXSIZE: '1048576',
    UEDITOR_CONFIG: 'ueditor.json',
  })
  assert.deepEqual(await run.started, { code: 1 })
  const out = run.stderr()
  assert.ok(
    out.includes('- unknown variable UEDITOR_IMAGE_MAXSIZE (did you mean UEDITOR_IMAGE_MAX_SIZE?)'),
    out,
  )
  assert.ok(
    out.includes(
      '- catcher.alowHosts (from ueditor.json): unknown key (did you mean catcher.allowHosts?)',
    ),
    out,
  )
})

test('a value the config schema refuses stops the binary with the English message zod gives it', async (t) => {
  const dir = await tempDir(t, 'ueditor-startup-')
  const run = runBinary(t, dir, { PORT: '-1', UEDITOR_IMAGES_QUALITY: 'high' })
  assert.deepEqual(await run.started, { code: 1 })
  const out = run.stderr()
  assert.ok(out.includes('- http.port (from PORT=-1): Too small: expected number to be >=0'), out)
  assert.ok(
    out.includes(
      '- images.quality (from UEDITOR_IMAGES_QUALITY=high): Invalid input: expected number, received string',
    ),
    out,
  )
})

test('the start-up lines name the auth mode: that uploads are refused until auth is set, or that anyone who can reach the port may upload', async (t) => {
  const dir = await tempDir(t, 'ueditor-startup-')
  const unset = runBinary(t, dir, { UEDITOR_LOG_LEVEL: 'silent' })
  await urlOf(unset)
  assert.match(
    unset.stderr(),
    /\n {2}auth: {24}not configured: uploads, listings and captures are refused until you set UEDITOR_AUTH_TOKENS, UEDITOR_AUTH_JWT_SECRET or UEDITOR_AUTH_JWKS_URL \(docs\/auth\.md\), or UEDITOR_AUTH=none \(auth\.mode: none\) to let anyone who can reach the server in on purpose\n/,
  )
  unset.child.kill('SIGTERM')
  await unset.exited

  const open = runBinary(t, dir, { UEDITOR_LOG_LEVEL: 'silent', UEDITOR_AUTH: 'none' })
  await urlOf(open)
  assert.match(
    open.stderr(),
    /\n {2}auth: {24}none \(UEDITOR_AUTH=none\): anyone who can reach this port may upload, list and capture files\n/,
  )
  open.child.kill('SIGTERM')
  await open.exited

  const tokens = runBinary(t, dir, {
    UEDITOR_LOG_LEVEL: 'silent',
    UEDITOR_AUTH_TOKENS: `${TOKENS},bob:bob-token-0123456789abcdef`,
    UEDITOR_AUTH_QUERY_PARAM: 'token',
  })
  await urlOf(tokens)
  assert.match(
    tokens.stderr(),
    /\n {2}auth: {24}static tokens \(2 users\); tokens also read from the query parameter token\n/,
  )
  tokens.child.kill('SIGTERM')
  await tokens.exited

  const jwt = runBinary(t, dir, {
    UEDITOR_LOG_LEVEL: 'silent',
    UEDITOR_AUTH_JWT_SECRET: 'a-shared-secret-of-at-least-32-characters',
    UEDITOR_AUTH_JWT_AUDIENCE: 'ueditor',
  })
  await urlOf(jwt)
  assert.match(jwt.stderr(), /\n {2}auth: {24}JWT \(HS256 secret, audience ueditor\)\n/)
  assert.doesNotMatch(jwt.stderr(), /a-shared-secret/)
})

test('sizes with units are read from the environment and the config file, and the editor is told the bytes', async (t) => {
  const dir = await tempDir(t, 'ueditor-startup-')
  await writeFile(
    join(dir, 'ueditor.json'),
    JSON.stringify({
      editor: { fileMaxSize: '1.5GiB', videoMaxSize: '512KB', audioMaxSize: 3_000_000 },
      limits: { quotaBytes: '10 GB', minFreeBytes: '1MB' },
      materials: { maxBodyBytes: '64KiB' },
      formula: { cacheBytes: '8MiB' },
      http: { drainMaxBytes: '1mb' },
    }),
  )
  const run = runBinary(t, dir, {
    UEDITOR_LOG_LEVEL: 'silent',
    UEDITOR_CONFIG: 'ueditor.json',
    UEDITOR_IMAGE_MAX_SIZE: '2MB',
    UEDITOR_SCRAWL_MAX_SIZE: '1048576',
  })
  const config = await configAnswerOf(run)
  assert.equal(config.imageMaxSize, 2 * 1024 ** 2)
  assert.equal(config.scrawlMaxSize, 1_048_576)
  assert.equal(config.fileMaxSize, 1.5 * 1024 ** 3)
  assert.equal(config.videoMaxSize, 512 * 1024)
  assert.equal(config.audioMaxSize, 3_000_000)
})

test('a size the server cannot read stops the start and lists the forms it accepts', async (t) => {
  const dir = await tempDir(t, 'ueditor-startup-')
  await writeFile(join(dir, 'ueditor.json'), JSON.stringify({ materials: { maxBodyBytes: true } }))
  const run = runBinary(t, dir, { UEDITOR_QUOTA_BYTES: '2 lots', UEDITOR_CONFIG: 'ueditor.json' })
  assert.deepEqual(await run.started, { code: 1 })
  const forms =
    'must be a size: a number of bytes (2097152) or a number and a unit: 512KB, 2MB, 1.5GiB (B, KB, MB, GB, TB or KiB, MiB, GiB, TiB; KB and KiB both count 1024 bytes)'
  assert.ok(
    run.stderr().includes(`- limits.quotaBytes (from UEDITOR_QUOTA_BYTES=2 lots): ${forms}`),
    run.stderr(),
  )
  assert.ok(
    run.stderr().includes(`- materials.maxBodyBytes (from ueditor.json: true): ${forms}`),
    run.stderr(),
  )
})

test("a UEDITOR_ variable unlike any of the server's own is named in a warning at start, and the server serves", async (t) => {
  const dir = await tempDir(t, 'ueditor-startup-')
  const run = runBinary(t, dir, { UEDITOR_LOG_FORMAT: 'json', UEDITOR_FRONTEND_BUILD_ID: '42' })
  const url = await urlOf(run)
  assert.equal((await fetch(`${url}/healthz`)).status, 200)
  const warning = logLines(run.stderr()).find((l) => l.variable === 'UEDITOR_FRONTEND_BUILD_ID')
  assert.equal(warning?.level, 'warn')
  assert.equal(
    warning?.msg,
    'unknown variable UEDITOR_FRONTEND_BUILD_ID: the server does not read it (ueditor-server --help lists every variable)',
  )
})

test('with AI on, the start logs no warning about the editor keys the server sets itself', async (t) => {
  const dir = await tempDir(t, 'ueditor-startup-')
  const run = runBinary(t, dir, {
    UEDITOR_LOG_FORMAT: 'json',
    UEDITOR_AI_BASE_URL: 'http://127.0.0.1:9/v1',
    UEDITOR_AI_API_KEY: 'sk-test-key',
    UEDITOR_AI_MODEL: 'gpt-4o-mini',
  })
  const config = await configAnswerOf(run)
  assert.equal(config.ai.driverConfig.url, '/ueditor?action=ai')
  const lines = logLines(run.stderr())
  assert.ok(
    lines.some((l) => l.msg === 'AI relay on'),
    run.stderr(),
  )
  assert.deepEqual(
    lines.filter((l) => l.level === 'warn' || l.level === 'error'),
    [],
  )
})

test('a data folder the user cannot write stops the start with the folder, the user and the fix', async (t) => {
  const dir = await tempDir(t, 'ueditor-startup-')
  const parent = join(dir, 'locked')
  await mkdir(parent)
  // Root writes anywhere: run the binary as nobody, in folders it may read but not write.
  const asRoot = process.getuid?.() === 0
  if (asRoot) await chmod(dir, 0o755)
  else await chmod(parent, 0o555)
  const run = runBinary(
    t,
    dir,
    { UEDITOR_DATA_DIR: join(parent, 'data') },
    asRoot ? { uid: 65534, gid: 65534 } : {},
  )
  assert.deepEqual(await run.started, { code: 1 })
  const out = run.stderr()
  const user = asRoot ? /for user \S+ \(uid 65534, EACCES\)/ : /for user \S+ \(uid \d+, EACCES\)/
  assert.ok(
    out.startsWith(
      `ueditor-server cannot create the folder ${parent}/data: ${parent} is not writable for user `,
    ),
    out,
  )
  assert.match(out, user)
  assert.ok(
    out.includes(`Fix: give that user the folder (sudo mkdir -p ${parent}/data && sudo chown -R `),
    out,
  )
  assert.match(
    out,
    /or point UEDITOR_DATA_DIR \(and any folder set apart from it\) at one it can write/,
  )
  assert.doesNotMatch(out, /\n\s+at /, 'no stack trace')
})

// Tests run from packages/server/dist/tests/standalone; the README is at the repository's root.
const PNG = png(8, 8)
const ROOT = fileURLToPath(new URL('../../../../../', import.meta.url))

test('the README’s first-run command, as written, starts a server that takes an upload and lists it', async (t) => {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8')
  const quickStart = readme.slice(readme.indexOf('## Quick start'))
  const command = /```sh\n(.*)\n```/.exec(quickStart)?.[1] ?? ''
  // `npm ci && <VARIABLES> npm start`, where `npm start` builds and runs the binary.
  const m = /^npm ci && ((?:[A-Z_]+=\S+ )*)npm start$/.exec(command)
  assert.ok(m, `the quick start's first command: ${command}`)
  const scripts = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')).scripts
  assert.equal(
    scripts.start,
    'npm run build --silent && node packages/server/dist/bin/ueditor-server.cjs',
  )
  const env = Object.fromEntries(
    (m[1] as string)
      .trim()
      .split(' ')
      .filter(Boolean)
      .map((pair) => pair.split('=', 2) as [string, string]),
  )
  const dir = await tempDir(t, 'ueditor-first-run-')
  const run = runBinary(t, dir, { ...env, UEDITOR_LOG_LEVEL: 'silent' })
  const url = await urlOf(run)
  const form = new FormData()
  form.append('upfile', new Blob([new Uint8Array(PNG)], { type: 'image/png' }), 'pasted.png')
  const stored = await (
    await fetch(`${url}/ueditor?action=image`, { method: 'POST', body: form })
  ).json()
  assert.equal(stored.state, 'SUCCESS', JSON.stringify(stored))
  const listed = await (await fetch(`${url}/ueditor?action=listImage&start=0&size=20`)).json()
  assert.deepEqual(
    listed.list.map((f: { url: string }) => f.url),
    [stored.url],
  )
  assert.equal((await fetch(`${url}${stored.url}`)).status, 200)
})
