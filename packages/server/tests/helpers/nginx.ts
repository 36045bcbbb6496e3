import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { freePort } from './ports.js'

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p))

export interface RunningNginx {
  url: string
  /** nginx's own folder (its logs, temp files, pid), removed after the test. */
  dir: string
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
  const deadline = Date.now() + 15_000
  for (;;) {
    if (child.exitCode !== null) assert.fail(`nginx exited: ${stderr}`)
    try {
      await fetch(`${url}/healthz`)
      return { url, dir }
    } catch {
      if (Date.now() > deadline) assert.fail(`nginx did not answer: ${stderr}`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }
}
