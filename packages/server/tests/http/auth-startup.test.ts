import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { bindVerdict, resolveAuthMode } from '../../src/auth/mode.js'
import { loadConfig } from '../../src/config/load.js'
import { eventually } from '../helpers/eventually.js'
import { listeningUrl } from '../helpers/server-process.js'
import { test } from '../helpers/test.js'

const MAIN = fileURLToPath(new URL('../../bin/ueditor-server.cjs', import.meta.url))

/** Runs the binary to its exit; it must stop before listening, so it never binds. */
async function runToExit(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'ueditor-auth-'))
  try {
    const child = spawn(process.execPath, [MAIN], {
      cwd: dir,
      env: { PATH: process.env.PATH, UEDITOR_DATA_DIR: dir, PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (c) => {
      stderr += c
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
    clearTimeout(timer)
    return { code, stderr }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

test('the standalone server refuses to start on 0.0.0.0 without auth, and says how to fix it', async () => {
  const { code, stderr } = await runToExit({ HOST: '0.0.0.0' })
  assert.equal(code, 1)
  assert.match(stderr, /Invalid configuration/)
  assert.match(stderr, /0\.0\.0\.0 is not a loopback address/)
  assert.match(stderr, /UEDITOR_AUTH=none/)
  assert.doesNotMatch(stderr, /listening/)
})

test('a bad JWT setting stops the binary without echoing the secret', async () => {
  const secret = 'short-secret-value'
  const { code, stderr } = await runToExit({
    HOST: '0.0.0.0',
    UEDITOR_AUTH_JWT_SECRET: secret,
  })
  assert.equal(code, 1)
  assert.match(stderr, /auth\.jwt\.secret \(from UEDITOR_AUTH_JWT_SECRET=<hidden>\)/)
  assert.match(stderr, /auth\.jwt\.audience/)
  assert.doesNotMatch(stderr, new RegExp(secret))
})

test('without auth only loopback is allowed; an explicit UEDITOR_AUTH=none elsewhere warns', () => {
  const mode = (env: NodeJS.ProcessEnv) => resolveAuthMode(loadConfig({ env }).auth, false)
  assert.equal(bindVerdict('127.0.0.1', mode({})), 'ok')
  assert.equal(bindVerdict('::1', mode({})), 'ok')
  assert.equal(bindVerdict('0.0.0.0', mode({})), 'refuse')
  assert.equal(bindVerdict('::', mode({})), 'refuse')
  assert.equal(bindVerdict('192.0.2.10', mode({ UEDITOR_AUTH: 'none' })), 'warn')
  const tokens = mode({ UEDITOR_AUTH_TOKENS: 'alice:alice-token-0123456789abcdef' })
  assert.deepEqual(tokens, { mode: 'tokens', explicit: false })
  assert.equal(bindVerdict('0.0.0.0', tokens), 'ok')
  assert.equal(resolveAuthMode(loadConfig({ env: {} }).auth, true).mode, 'hook')
  assert.throws(
    () => resolveAuthMode(loadConfig({ env: { UEDITOR_AUTH: 'hook' } }).auth, false),
    /authorize function/,
  )
})

test('auth settings from the environment are validated, and a bad one is reported without its value', () => {
  const cfg = loadConfig({
    env: {
      UEDITOR_AUTH_TOKENS: 'alice:alice-token-0123456789abcdef,bob:bob-token-0123456789abcdef',
      UEDITOR_AUTH_ADMIN_USERS: 'alice',
      UEDITOR_AUTH_HEADER: 'X-Token',
      UEDITOR_AUTH_QUERY_PARAM: 'token',
      UEDITOR_AUTH_SHARED_LIBRARY: 'true',
      UEDITOR_DELETE_ENABLED: 'true',
      UEDITOR_QUOTA_BYTES: '1048576',
    },
  })
  assert.equal(cfg.auth.tokens.length, 2)
  assert.deepEqual(cfg.auth.adminUsers, ['alice'])
  assert.equal(cfg.auth.header, 'X-Token')
  assert.equal(cfg.auth.queryParam, 'token')
  assert.equal(cfg.auth.sharedLibrary, true)
  assert.equal(cfg.delete.enabled, true)
  assert.equal(cfg.limits.quotaBytes, 1_048_576)

  const leaked = 'sh0rt'
  assert.throws(
    () =>
      loadConfig({
        env: { UEDITOR_AUTH_TOKENS: `alice:${leaked}`, UEDITOR_AUTH_QUERY_PARAM: 'callback' },
      }),
    (e: Error) =>
      /auth\.tokens\.0 \(from UEDITOR_AUTH_TOKENS\)|auth\.tokens\.0/.test(e.message) &&
      /auth\.queryParam/.test(e.message) &&
      !e.message.includes(leaked),
  )
})

/** The binary on port 0 until the test ends; resolves with its URL and its stderr so far. */
async function serveUntilEnd(
  t: { after(fn: () => Promise<void> | void): void },
  env: NodeJS.ProcessEnv,
): Promise<{ url: string; stderr: () => string }> {
  const dir = await mkdtemp(join(tmpdir(), 'ueditor-auth-'))
  const child = spawn(process.execPath, [MAIN], {
    cwd: dir,
    env: { PATH: process.env.PATH, UEDITOR_DATA_DIR: dir, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.after(async () => {
    const exited = new Promise((r) => child.once('exit', r))
    child.kill('SIGKILL')
    await exited
    await rm(dir, { recursive: true, force: true })
  })
  let stderr = ''
  child.stderr.on('data', (c) => {
    stderr += c
  })
  const url = await listeningUrl(child)
  return { url, stderr: () => stderr }
}

/** The auth audit lines the binary logged. */
function auditLines(stderr: string): Record<string, unknown>[] {
  return stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.audit === 'auth')
}

test('a token in the query while auth.queryParam is off is refused with a log line that names the setting accepting it', async (t) => {
  const token = 'alice-token-0123456789abcdef'
  const srv = await serveUntilEnd(t, {
    UEDITOR_LOG_FORMAT: 'json',
    UEDITOR_AUTH_TOKENS: `alice:${token}`,
  })
  const res = await fetch(`${srv.url}/ueditor?action=listImage&start=0&size=20&token=${token}`)
  assert.equal((await res.json()).code, 'UE_UNAUTHORIZED')
  // The child writes its log asynchronously: wait for the line rather than race it.
  const logged = (count: number) =>
    eventually(async () => auditLines(srv.stderr()), {
      until: (lines) => lines.length >= count,
      what: 'the auth audit lines',
    })
  const [line] = await logged(1)
  assert.equal(line?.level, 'warn')
  assert.equal(line?.reason, 'missing')
  assert.equal(line?.queryToken, 'token')
  assert.equal(
    line?.msg,
    'auth refused: a token arrived in the query parameter "token", which is not read while auth.queryParam is off; UEDITOR_AUTH_QUERY_PARAM=token accepts it (docs/auth.md)',
  )
  assert.doesNotMatch(srv.stderr(), new RegExp(token))

  // Without a token in the query the line stays the plain refusal.
  await (await fetch(`${srv.url}/ueditor?action=listImage&start=0&size=20`)).json()
  assert.equal((await logged(2))[1]?.msg, 'auth refused')
})

test('a token in a query parameter other than the configured one is refused with a log line naming both', async (t) => {
  const token = 'alice-token-0123456789abcdef'
  const srv = await serveUntilEnd(t, {
    UEDITOR_LOG_FORMAT: 'json',
    UEDITOR_AUTH_TOKENS: `alice:${token}`,
    UEDITOR_AUTH_QUERY_PARAM: 'ue_token',
  })
  const res = await fetch(`${srv.url}/ueditor?action=listImage&start=0&size=20&token=${token}`)
  assert.equal((await res.json()).code, 'UE_UNAUTHORIZED')
  const [line] = await eventually(async () => auditLines(srv.stderr()), {
    until: (lines) => lines.length >= 1,
    what: 'an auth audit line',
  })
  assert.equal(
    line?.msg,
    'auth refused: a token arrived in the query parameter "token", which is not read (auth.queryParam is "ue_token"); UEDITOR_AUTH_QUERY_PARAM=token accepts it (docs/auth.md)',
  )
  const ok = await fetch(`${srv.url}/ueditor?action=listImage&start=0&size=20&ue_token=${token}`)
  assert.equal((await ok.json()).state, 'SUCCESS')
})
