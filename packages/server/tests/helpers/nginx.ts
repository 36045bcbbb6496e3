import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { documentedBlock } from './documented.js'
import { freePort } from './ports.js'
import { untilAnswering } from './server-process.js'

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p))

export interface RunningNginx {
  url: string
  /** nginx's own folder (its logs, temp files, pid), removed after the test. */
  dir: string
  /** nginx's error log so far, for a failure message. */
  errors(): Promise<string>
}

/**
 * Debian's nginx on 127.0.0.1, in the foreground, with `http` as the inside of its `http { }`
 * block; `http` gets the port to listen on and nginx's folder. Stopped after the test. A
 * missing nginx skips the test with the reason, or fails it with CI=true.
 */
export async function startNginx(
  t: TestContext,
  http: (o: { port: number; dir: string }) => string,
): Promise<RunningNginx | undefined> {
  if (!NGINX) {
    const reason = 'nginx not found; install the Debian package "nginx"'
    if (process.env.CI) assert.fail(reason)
    t.skip(reason)
    return undefined
  }
  const dir = await mkdtemp(join(tmpdir(), 'ueditor-nginx-'))
  await chmod(dir, 0o755)
  const port = await freePort()
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
  for (const name of temp) await mkdir(join(dir, name))
  const conf = `${process.getuid?.() === 0 ? 'user root;\n' : ''}daemon off;
master_process on;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 64; }
http {
  access_log off;
${temp.map((n) => `  ${n}_temp_path ${dir}/${n};`).join('\n')}
${http({ port, dir })}
}
`
  await writeFile(join(dir, 'nginx.conf'), conf)
  const child: ChildProcess = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr?.on('data', (c) => {
    stderr += c
  })
  t.after(async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r))
      child.kill('SIGQUIT')
      await exited
    }
    await rm(dir, { recursive: true, force: true })
  })
  const url = `http://127.0.0.1:${port}`
  // Any answer will do: nginx listens (the upstream may not be up yet).
  await untilAnswering(child, {
    probe: async () => {
      await (await fetch(`${url}/healthz`)).arrayBuffer()
      return true
    },
    what: `nginx answering on ${url}`,
    output: () => stderr,
    timeoutMs: 15_000,
  })
  const errors = () => readFile(join(dir, 'error.log'), 'utf8').catch(() => '')
  return { url, dir, errors }
}

/** The nginx site of docs/deploy.md, as written. */
export function documentedSite(): string {
  return documentedBlock('deploy.md', 'nginx', 'upstream ueditor_backend')
}

/**
 * The documented site in front of one node, or two with the documented second `server` line
 * switched on. Only the addresses (loopback, free ports) and the site's root change; every
 * other line is the guide's.
 */
export function startDocumentedSite(
  t: TestContext,
  o: { upstreams: readonly number[]; root: string },
): Promise<RunningNginx | undefined> {
  const [first, second, ...more] = o.upstreams
  assert.ok(first !== undefined && more.length === 0, 'one or two nodes')
  const swap = (text: string, from: string, to: string) => {
    assert.ok(text.includes(from), `the documented site has \`${from}\``)
    return text.replace(from, to)
  }
  let site = swap(
    documentedSite(),
    'server 127.0.0.1:8080 max_fails=0;',
    `server 127.0.0.1:${first} max_fails=0;`,
  )
  if (second !== undefined)
    site = swap(
      site,
      '#server 127.0.0.1:8081 max_fails=0;',
      `server 127.0.0.1:${second} max_fails=0;`,
    )
  site = swap(site, 'root /var/www/example;', `root ${o.root};`)
  return startNginx(
    t,
    ({ port }) =>
      // Debian's nginx.conf includes the types; the site relies on them for the page.
      `  include /etc/nginx/mime.types;\n${swap(site, 'listen 80;', `listen 127.0.0.1:${port};`)}`,
  )
}

/**
 * The block of the site's `location` whose line holds `needle`, and the value of a directive
 * in it (`client_max_body_size` → `110m`).
 */
export function siteLocation(
  site: string,
  needle: string,
): { text: string; get(name: string): string | undefined } {
  const lines = site.split('\n')
  const start = lines.findIndex((l) => /^\s*location\b/.test(l) && l.includes(needle))
  assert.ok(start >= 0, `the documented site has a location with ${needle}`)
  const end = lines.findIndex((l, i) => i > start && /^\s*}\s*$/.test(l))
  const text = lines.slice(start, end + 1).join('\n')
  return {
    text,
    get: (name) => new RegExp(`^\\s*${name}\\s+([^;]+);`, 'm').exec(text)?.[1],
  }
}

/** nginx's size (`110m`, `2m`, `0`) in bytes. */
export function nginxSize(value: string): number {
  const m = /^(\d+)([kKmMgG]?)$/.exec(value)
  assert.ok(m, `a size: ${value}`)
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[
    (m[2] as string).toLowerCase()
  ] as number
  return Number(m[1]) * unit
}
