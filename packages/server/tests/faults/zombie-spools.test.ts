import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer } from '../../src/standalone/serve.js'
import { eventually } from '../helpers/eventually.js'
import { type TestContext, test } from '../helpers/test.js'

/**
 * A zombie: `sleep 0.1` runs in the background of a shell that then becomes `sleep 30`, which
 * never waits for it, so once it exits it stays an unreaped entry in the process table
 * (`kill(pid, 0)` still succeeds), as a server killed with -9 does until its supervisor reaps it.
 */
async function zombie(t: TestContext): Promise<number> {
  const parent = spawn('sh', ['-c', 'sleep 0.1 & echo $!; exec sleep 30'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  t.after(() => {
    // Killing the parent lets init reap the zombie.
    if (parent.exitCode === null && parent.signalCode === null) parent.kill('SIGKILL')
  })
  const pid = await new Promise<number>((resolve, reject) => {
    let out = ''
    parent.stdout.on('data', (chunk) => {
      out += chunk
      if (out.includes('\n')) resolve(Number(out.trim()))
    })
    parent.once('exit', () => reject(new Error('the shell ended before naming its child')))
  })
  await eventually(
    async () => {
      const stat = await readFile(`/proc/${pid}/stat`, 'latin1')
      return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')
    },
    { timeoutMs: 5_000, intervalMs: 50, what: `process ${pid} a zombie` },
  )
  return pid
}

test('spool files and unfinished writes of a killed process that is still an unreaped zombie are removed at the next start', async (t) => {
  assert.equal(process.platform, 'linux', 'zombies are read from /proc')
  const pid = await zombie(t)
  assert.doesNotThrow(() => process.kill(pid, 0), 'the zombie still answers kill(pid, 0)')

  const dataDir = await mkdtemp(join(tmpdir(), 'ue-zombie-'))
  t.after(() => rm(dataDir, { recursive: true, force: true }))
  const spool = `req-${pid}-${randomUUID()}`
  const part = `${pid}-0123456789abcdef.part`
  const liveSpool = `req-${process.ppid}-${randomUUID()}`
  await mkdir(join(dataDir, 'tmp'), { recursive: true })
  await mkdir(join(dataDir, 'uploads', '.incoming'), { recursive: true })
  await writeFile(join(dataDir, 'tmp', spool), Buffer.alloc(100))
  await writeFile(join(dataDir, 'tmp', liveSpool), Buffer.alloc(100))
  await writeFile(join(dataDir, 'uploads', '.incoming', part), Buffer.alloc(100))

  const server = await startServer({
    env: {},
    config: { dataDir, logLevel: 'silent', http: { port: 0, host: '127.0.0.1' } },
  })
  t.after(() => server.close())

  assert.deepEqual(
    await readdir(join(dataDir, 'tmp')),
    [liveSpool],
    "the zombie's spool is gone, a live process's stays",
  )
  assert.deepEqual(
    await readdir(join(dataDir, 'uploads', '.incoming')),
    [],
    "the zombie's unfinished write is gone",
  )
})
