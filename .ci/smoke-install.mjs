#!/usr/bin/env node
// Installs the two release tarballs into a fresh app outside the workspace, as a user would,
// then imports them, type-checks an import, asks the installed bin for its version, starts it
// on port 0 and uploads a picture. Runs under whichever node executes it (CI runs it under the
// machine's Node and under the newest LTS binary); npm and native builds follow that node.
//
//   node .ci/smoke-install.mjs              # with build tools, as on a developer machine
//   SMOKE_NO_COMPILER=1 node .ci/smoke-install.mjs   # as on a machine without python/make/g++
import { execFileSync, spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { crc32, deflateSync } from 'node:zlib'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const noCompiler = process.env.SMOKE_NO_COMPILER === '1'
const env = {
  ...process.env,
  PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
  npm_config_fund: 'false',
  npm_config_audit: 'false',
  npm_config_update_notifier: 'false',
}
// node-gyp needs python, make and a C++ compiler; pointing it at none is how a bare machine looks.
if (noCompiler)
  Object.assign(env, { PYTHON: '/nonexistent/python3', CXX: '/bin/false', CC: '/bin/false' })
// As a user behind a firewall installs (docs/node-versions.md, "Installing where only the npm
// registry is reachable"): none of this machine's own npm settings, no prebuilt binary, Node's
// headers from its own folder. node-gyp's header address points at a closed loopback port, so an
// install that still tried to download headers would fail here at once instead of passing.
const nodePrefix = dirname(dirname(process.execPath))
const installEnv = {
  ...env,
  npm_config_userconfig: '/dev/null',
  npm_config_build_from_source: 'true',
  npm_config_nodedir: nodePrefix,
  npm_config_disturl: 'http://127.0.0.1:9/',
}

const step = (what) => process.stdout.write(`smoke (node ${process.version}): ${what}\n`)
const run = (cmd, args, cwd) =>
  execFileSync(cmd, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })

const work = await mkdtemp(join(tmpdir(), 'ueditor-smoke-'))
let server
try {
  step('npm pack')
  const tarballs = []
  for (const pkg of ['server', 'loaders']) {
    const out = run(
      'npm',
      ['pack', '--json', '--pack-destination', work],
      join(ROOT, 'packages', pkg),
    )
    tarballs.push(join(work, JSON.parse(out)[0].filename))
  }

  const app = join(work, 'app')
  execFileSync('mkdir', ['-p', app])
  await writeFile(
    join(app, 'package.json'),
    // As the README tells Node 20 users: approve better-sqlite3's build (npm 11 allowScripts).
    // Without a compiler the app approves nothing; Node 22.13+ needs no build.
    JSON.stringify({
      name: 'smoke-app',
      private: true,
      type: 'module',
      ...(noCompiler ? {} : { allowScripts: { 'better-sqlite3': true } }),
    }),
  )
  step(
    `npm install ${tarballs.map((t) => t.slice(work.length + 1)).join(' ')}${noCompiler ? ' (no compiler)' : ''}`,
  )
  execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...tarballs], {
    cwd: app,
    env: installEnv,
    stdio: ['ignore', 'pipe', 'inherit'],
  })

  const installed = JSON.parse(
    await readFile(join(app, 'node_modules/@ueditor-backend/server/package.json'), 'utf8'),
  )
  step('import both packages')
  await writeFile(
    join(app, 'check.mjs'),
    `import { createUeditorServer, toNodeHandler, startServer } from '@ueditor-backend/server'
import { toNodeHandler as fromNode } from '@ueditor-backend/server/node'
import { createMaterialLoaders } from '@ueditor-backend/loaders'
import { createRequire } from 'node:module'
for (const [name, f] of Object.entries({ createUeditorServer, toNodeHandler, startServer, fromNode, createMaterialLoaders }))
  if (typeof f !== 'function') throw new Error(name + ' is not exported')
createRequire(import.meta.url).resolve('@ueditor-backend/loaders/bundle')
`,
  )
  run(process.execPath, ['check.mjs'], app)

  step('type-check an import with the installed types')
  await writeFile(
    join(app, 'typed.ts'),
    `import { createUeditorServer, type UeditorServer } from '@ueditor-backend/server'
import { createMaterialLoaders } from '@ueditor-backend/loaders'
const ue: Promise<UeditorServer> = createUeditorServer({ config: { editor: { imageMaxSize: 1048576 } } })
void ue
void createMaterialLoaders
`,
  )
  run(
    process.execPath,
    [
      join(ROOT, 'node_modules/typescript/bin/tsc'),
      '--noEmit',
      '--strict',
      '--skipLibCheck',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--types',
      'node',
      '--typeRoots',
      join(ROOT, 'node_modules/@types'),
      'typed.ts',
    ],
    app,
  )

  const bin = join(app, 'node_modules/.bin/ueditor-server')
  step('ueditor-server --version')
  const version = run(bin, ['--version'], app).trim()
  if (version !== installed.version)
    throw new Error(`--version said "${version}", package is ${installed.version}`)

  step('start the installed bin on port 0')
  server = spawn(bin, [], {
    cwd: app,
    // Anonymous on purpose: the upload below carries no credential.
    env: { ...env, PORT: '0', HOST: '127.0.0.1', UEDITOR_AUTH: 'none', UEDITOR_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let banner = ''
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within 60 s:\n${banner}`)), 60_000)
    server.stderr.on('data', (c) => {
      banner += c
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(banner)
      if (m) {
        clearTimeout(timer)
        resolve(m[1])
      }
    })
    server.on('exit', (code) => reject(new Error(`exited with ${code}:\n${banner}`)))
  })

  step(`upload a picture to ${url}/ueditor?action=image`)
  const form = new FormData()
  form.append('upfile', new Blob([tinyPng()], { type: 'image/png' }), 'smoke.png')
  const answer = await (
    await fetch(`${url}/ueditor?action=image`, { method: 'POST', body: form })
  ).json()
  if (answer.state !== 'SUCCESS') throw new Error(`upload answered ${JSON.stringify(answer)}`)
  const stored = await fetch(new URL(answer.url, url))
  if (stored.status !== 200 || stored.headers.get('content-type') !== 'image/png')
    throw new Error(
      `the stored file answered ${stored.status} ${stored.headers.get('content-type')}`,
    )
  const list = await (await fetch(`${url}/ueditor?action=listImage&start=0&size=20`)).json()
  if (list.list?.[0]?.url !== answer.url)
    throw new Error(`listImage answered ${JSON.stringify(list)}`)
  const engine = /index: +SQLite \S+ through (\S+)/.exec(banner)?.[1] ?? 'see banner'
  // What the README promises for Node 22.13+ without a compiler: the failed optional build is
  // left out quietly, and the index runs on Node's own SQLite.
  if (noCompiler && engine !== 'node:sqlite')
    throw new Error(`without a compiler the index opened through ${engine}, not node:sqlite`)
  step(
    `ok: ${installed.name}@${installed.version} installed, served and stored an upload (SQLite through ${engine})`,
  )
} finally {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.on('exit', r))
    server.kill('SIGTERM')
    await exited
  }
  await rm(work, { recursive: true, force: true })
}

/** A valid 2×2 RGB PNG, built here so the script needs no fixture file. */
function tinyPng() {
  const chunk = (type, data) => {
    const len = Buffer.alloc(4)
    len.writeUInt32BE(data.length)
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data])
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(crc32(body))
    return Buffer.concat([len, body, crc])
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(2, 0)
  ihdr.writeUInt32BE(2, 4)
  ihdr.set([8, 2, 0, 0, 0], 8)
  const rows = Buffer.from([0, 255, 0, 0, 0, 255, 0, 0, 0, 0, 255, 255, 255, 255])
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ])
}
