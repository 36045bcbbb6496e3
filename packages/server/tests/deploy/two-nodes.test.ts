import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdir, readdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runToEnd } from '../helpers/cli.js'
import { documentedBlock, documentedFiles } from '../helpers/documented.js'
import { startDocumentedSite } from '../helpers/nginx.js'
import { freePort } from '../helpers/ports.js'
import { untilReady } from '../helpers/server-process.js'
import { environmentSources, resolveEnvironment, systemdReading } from '../helpers/systemd.js'
import { tempDir } from '../helpers/temp-dir.js'
import { type TestContext, test } from '../helpers/test.js'

const MAIN = fileURLToPath(new URL('../../bin/ueditor-server.cjs', import.meta.url))
const UNITS = '/etc/systemd/system'
const EDITOR_TOKEN = 'editor-token-0123456789abcdef'
const METRICS_TOKEN = 'metrics-token-0123456789abcdef'

/** Writes `files` (absolute path → text) under `root`. */
async function install(root: string, files: Iterable<[string, string]>): Promise<void> {
  for (const [path, text] of files) {
    await mkdir(dirname(join(root, path)), { recursive: true })
    await writeFile(join(root, path), text)
  }
}

/** A unit file and its drop-ins (`<unit>.d/*.conf`, in name order), as systemd reads them. */
async function unitTexts(root: string, name: string): Promise<string[]> {
  const dropIns = join(root, UNITS, `${name}.d`)
  const confs = existsSync(dropIns)
    ? (await readdir(dropIns)).filter((f) => f.endsWith('.conf')).sort()
    : []
  return [join(root, UNITS, name), ...confs.map((f) => join(dropIns, f))].map((f) =>
    readFileSync(f, 'utf8'),
  )
}

/** A file of the machine under `root`, or undefined when it does not exist. */
const reader = (root: string) => (path: string) =>
  existsSync(join(root, path)) ? readFileSync(join(root, path), 'utf8') : undefined

/** systemd's reading of the unit agrees with this test's, where systemd-analyze is installed. */
function assertSystemdAgrees(t: TestContext, unitFile: string, texts: string[], name: string) {
  const reading = systemdReading(unitFile)
  if (!reading) {
    t.diagnostic('systemd-analyze is not installed: the units are read by this test only')
    return
  }
  const ours = environmentSources(name, texts)
  assert.deepEqual(reading.environment, ours.environment, `${name}: Environment=`)
  assert.deepEqual(reading.files, ours.files, `${name}: EnvironmentFile=`)
  // The unit names /usr/bin/node, which another machine may keep elsewhere.
  const warnings = reading.warnings
    .split('\n')
    .filter((l) => l !== '' && (existsSync('/usr/bin/node') || !l.includes('/usr/bin/node')))
  assert.deepEqual(warnings, [], `systemd-analyze verify ${name}`)
}

test('systemd’s rule as these tests apply it: EnvironmentFile= wins over Environment= wherever each stands, a later file over an earlier one, and systemd reads the lists alike', async (t) => {
  const root = await tempDir(t, 'ue-units-')
  await install(root, [
    ['/etc/ueditor/ueditor.env', 'PORT=8080\nHOST=127.0.0.1\n'],
    ['/etc/ueditor/node-ueditor-b.env', 'PORT=8081\n'],
  ])
  // A copy of the unit with Environment=PORT=8081 added after the shared file: still 8080.
  const copy = ['[Service]\nExecStart=/bin/true\nEnvironmentFile=/etc/ueditor/ueditor.env\n']
  copy[0] += 'Environment=PORT=8081\n'
  const copied = environmentSources('ueditor-b.service', copy)
  assert.equal(resolveEnvironment(copied, reader(root)).get('PORT'), '8080')
  // A drop-in's file comes after the unit's, and the later file wins; %N names the unit.
  const texts = [
    '[Service]\nExecStart=/bin/true\nEnvironmentFile=/etc/ueditor/ueditor.env\n',
    '[Service]\nEnvironment="PORT=9" HOST=0.0.0.0\nEnvironmentFile=/etc/ueditor/node-%N.env\n',
  ]
  const sources = environmentSources('ueditor-b.service', texts)
  assert.deepEqual(sources.files, ['/etc/ueditor/ueditor.env', '/etc/ueditor/node-ueditor-b.env'])
  const env = resolveEnvironment(sources, reader(root))
  assert.equal(env.get('PORT'), '8081')
  assert.equal(env.get('HOST'), '127.0.0.1')
  await install(root, [
    [`${UNITS}/ueditor-b.service`, texts[0] as string],
    [`${UNITS}/ueditor-b.service.d/node.conf`, texts[1] as string],
  ])
  assertSystemdAgrees(t, join(root, UNITS, 'ueditor-b.service'), texts, 'ueditor-b.service')
})

interface Node {
  name: string
  port: number
  child: ChildProcess
  spawnedAt: number
}

/** The service as systemd starts it: its ExecStart, in its WorkingDirectory, with `env` only. */
async function startUnit(
  t: TestContext,
  root: string,
  name: string,
  env: Map<string, string>,
): Promise<Node> {
  const sources = environmentSources(name, await unitTexts(root, name))
  const exec =
    /^\/usr\/bin\/node \/opt\/ueditor\/node_modules\/@ueditor-backend\/server\/dist\/bin\/ueditor-server\.cjs$/
  assert.match(sources.keys.get('ExecStart') ?? '', exec, `${name} starts the installed server`)
  const cwd = join(root, sources.keys.get('WorkingDirectory') ?? '/')
  await mkdir(cwd, { recursive: true })
  const port = Number(env.get('PORT'))
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH, ...Object.fromEntries(env) },
    cwd,
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  const spawnedAt = Date.now()
  let output = ''
  child.stderr?.on('data', (c) => {
    output += c
  })
  t.after(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000)
    await exited
    clearTimeout(killer)
  })
  await untilReady(child, `http://127.0.0.1:${port}`, () => `${name}:\n${output}`)
  return { name, port, child, spawnedAt }
}

async function startTime(target: string): Promise<number> {
  const res = await fetch(`http://${target}/metrics`, {
    headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
  })
  const text = await res.text()
  assert.equal(res.status, 200, text)
  const m = /^process_start_time_seconds (\d+(?:\.\d+)?)$/m.exec(text)
  assert.ok(m, `${target} answers its start time`)
  return Number(m[1])
}

test('the two nodes of docs/deploy.md, each with the environment systemd gives its unit, start on ports of their own, and the documented scrape targets each answer one node’s own numbers', async (t) => {
  const root = await tempDir(t, 'ue-two-nodes-')
  const ports = new Map([
    ['8080', await freePort()],
    ['8081', await freePort()],
  ])
  // The guide's files, with the test's ports and folders, and auth configured explicitly.
  const local = (text: string) =>
    text
      .replace(/^PORT=(\d+)$/gm, (line, port: string) => {
        const free = ports.get(port)
        assert.ok(free, `a documented port: ${line}`)
        return `PORT=${free}`
      })
      .replaceAll('/var/lib/ueditor', join(root, '/var/lib/ueditor'))
  const files = [...documentedFiles('deploy.md')].filter(([path]) => path.startsWith('/etc/'))
  assert.deepEqual(
    files.map(([path]) => path).filter((p) => p.startsWith(UNITS)),
    [`${UNITS}/ueditor.service`, `${UNITS}/ueditor-b.service.d/node.conf`],
    'the guide gives the unit and the second node’s drop-in',
  )
  await install(
    root,
    files.map(([path, text]) => [
      path,
      path === '/etc/ueditor/ueditor.env'
        ? `${local(text)}UEDITOR_AUTH_TOKENS=alice:${EDITOR_TOKEN}\nUEDITOR_METRICS_TOKEN=${METRICS_TOKEN}\nUEDITOR_LOG_LEVEL=warn\n`
        : local(text),
    ]),
  )
  // The second node's commands, as written, on this machine's folders.
  for (const line of documentedBlock('deploy.md', 'sh', 'ueditor-b.service').split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue
    const command = line.replace(/^sudo /, '').replaceAll(' /etc/', ` ${root}/etc/`)
    const ran = await runToEnd('sh', ['-c', command], {}, root)
    assert.equal(ran.code, 0, `${line}\n${ran.stderr}`)
  }

  // Every unit, the documented first one first (it creates the database).
  const names = (await readdir(join(root, UNITS))).filter((f) => f.endsWith('.service'))
  names.sort((a, b) => Number(b === 'ueditor.service') - Number(a === 'ueditor.service'))
  assert.deepEqual(names, ['ueditor.service', 'ueditor-b.service'])
  const nodes: Node[] = []
  for (const name of names) {
    const texts = await unitTexts(root, name)
    assertSystemdAgrees(t, join(root, UNITS, name), texts, name)
    const env = resolveEnvironment(environmentSources(name, texts), reader(root))
    t.diagnostic(`${name}: PORT=${env.get('PORT')}`)
    // Start times are whole seconds: the second node starts in another one.
    const previous = nodes.at(-1)
    if (previous) await new Promise((r) => setTimeout(r, previous.spawnedAt + 1_100 - Date.now()))
    nodes.push(await startUnit(t, root, name, env))
  }
  assert.deepEqual(
    nodes.map((n) => n.port).sort(),
    [...ports.values()].sort(),
    'each node on its own documented port',
  )

  // The scrape configuration of operations.md: one target a node, on the machine.
  const scrape = documentedBlock('operations.md', 'yaml', 'scrape_configs:')
  const configs = [...scrape.matchAll(/- targets: \[([^\]]*)\]\n\s*labels: \{ *([^}]*?) *\}/g)].map(
    (m) => ({
      targets: (m[1] as string).split(',').map((s) => s.trim().replace(/^'|'$/g, '')),
      labels: m[2] as string,
    }),
  )
  assert.equal(new Set(configs.map((c) => c.labels)).size, configs.length, 'a label per node')
  const targets = configs.flatMap((c) =>
    c.targets.map((target) => {
      const m = /^127\.0\.0\.1:(\d+)$/.exec(target)
      assert.ok(m, `${target} is scraped on the machine`)
      return `127.0.0.1:${ports.get(m[1] as string) ?? assert.fail(`${target} is a node's port`)}`
    }),
  )
  assert.deepEqual(
    [...targets].sort(),
    nodes.map((n) => `127.0.0.1:${n.port}`).sort(),
    'every node is scraped, each once',
  )
  const seen = new Map<string, Set<number>>()
  for (let round = 0; round < 4; round++)
    for (const target of targets) {
      const started = await startTime(target)
      seen.set(target, (seen.get(target) ?? new Set()).add(started))
    }
  for (const [target, times] of seen) assert.equal(times.size, 1, `${target}: ${[...times]}`)
  const each = [...seen.values()].map((s) => [...s][0])
  assert.equal(new Set(each).size, targets.length, `each node its own start time: ${each}`)

  // The documented site in front of both never hands /metrics out.
  const www = join(root, 'var/www/example')
  await mkdir(www, { recursive: true })
  const nginx = await startDocumentedSite(t, { upstreams: nodes.map((n) => n.port), root: www })
  if (!nginx) return
  const health = await fetch(`${nginx.url}/healthz`)
  assert.ok(health.headers.get('x-request-id'), 'the nodes answer through the site')
  for (let i = 0; i < 4; i++) {
    const res: Response = await fetch(`${nginx.url}/metrics`, {
      headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
    })
    const body = await res.text()
    assert.equal(res.headers.get('x-request-id'), null, 'refused by nginx, not by a node')
    assert.ok(res.status >= 400 && !body.includes('process_start_time_seconds'), body)
  }
})
