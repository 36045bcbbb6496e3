import assert from 'node:assert/strict'
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DeleteObjectCommand } from '@aws-sdk/client-s3'
import { EDITOR_DEFAULTS } from '../../src/config/editor-defaults.js'
import { renderKey } from '../../src/ingest/keys.js'
import { type Finished, runToEnd } from '../helpers/cli.js'
import { blob, png } from '../helpers/fixtures.js'
import { skipOrFail, startPostgresLane } from '../helpers/postgres.js'
import { S3RVER_CREDENTIALS, startS3rver } from '../helpers/s3rver.js'
import { type TestContext, test } from '../helpers/test.js'

// Tests run from packages/server/dist/tests/deploy; the guides are at the repository's root.
const DOCS = fileURLToPath(new URL('../../../../../docs/', import.meta.url))
const MAIN = fileURLToPath(new URL('../../bin/ueditor-server.cjs', import.meta.url))

/** The fenced block of a guide whose first line is `firstLine`, as written. */
function documentedBlock(guide: string, firstLine: string): string {
  const text = readFileSync(join(DOCS, guide), 'utf8')
  const blocks = [...text.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((m) => m[1] as string)
  const found = blocks.filter((b) => b.startsWith(`${firstLine}\n`))
  assert.equal(found.length, 1, `docs/${guide} has one block starting "${firstLine}"`)
  return found[0] as string
}

/** The commands of a block: its lines without comments and blank lines. */
function commandsOf(block: string): string[] {
  return block.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'))
}

/** The jobs of a documented /etc/cron.d block: each line's command, after the schedule and user. */
function cronJobs(firstLine: string): string[] {
  return commandsOf(documentedBlock('operations.md', firstLine)).map((line) => {
    const fields = line.split(/\s+/)
    assert.ok(
      fields.slice(0, 5).every((f) => /^(\*|\d+)$/.test(f)),
      line,
    )
    assert.equal(fields[5], 'ueditor', 'each job runs as the unit’s User=')
    const job = fields.slice(6).join(' ')
    assert.match(job, / --env-file \/etc\/ueditor\/ueditor\.env /)
    return job
  })
}

/** The one job of `jobs` that runs `command`. */
function jobRunning(jobs: string[], command: string): string {
  const found = jobs.filter((j) => j.includes(` ${command}`))
  assert.equal(found.length, 1, `one job runs ${command}`)
  return found[0] as string
}

const CRON_LOCAL =
  '# /etc/cron.d/ueditor: cron mails what a job prints; each prints only when there is something to see'
const CRON_S3 =
  '# /etc/cron.d/ueditor with S3 uploads: the backup copies the bucket; each prints only when there is something to see'

/** What `aws configure` would hold, pointed at the test's S3 server (s3rver's key pair). */
function awsCliEnv(endpoint: string): Record<string, string> {
  return {
    AWS_ENDPOINT_URL: endpoint,
    AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_REQUEST_CHECKSUM_CALCULATION: 'when_required',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'when_required',
    HOME: tmpdir(),
  }
}

/** Whether the AWS CLI runs here; without it an S3 backup test is skipped (failed on CI). */
function awsCliMissing(t: TestContext): boolean {
  const cli = spawnSync('aws', ['--version'], { encoding: 'utf8' })
  if (cli.status === 0) return false
  const reason = 'the AWS CLI (aws) is not installed; install it (the Debian package awscli)'
  if (process.env.CI === 'true') assert.fail(reason)
  t.skip(reason)
  return true
}

interface Machine {
  root: string
  dataDir: string
  backups: string
  envFile: string
  /** Every documented path and address as this test has them; the commands are otherwise run as written. */
  rewrite(command: string): string
  /** `systemctl start ueditor`: the binary with the unit's environment file and folder. */
  start(): Promise<void>
  /** `systemctl stop ueditor`: SIGTERM, then the wait for its exit. */
  stop(): Promise<void>
  url(): string
  /** A documented command line, through `sh -c` with only PATH set (as cron runs it). */
  sh(command: string): Promise<Finished>
  /** Runs a documented block line by line; each line must succeed but `reconcile`'s, returned. */
  runBlock(block: string): Promise<{ code: number | null; stdout: string } | undefined>
}

/**
 * One machine laid out as docs/deploy.md says, under a temp folder: the server binary where npm
 * puts it, the environment file (the documented one, with the test's folders and port, plus
 * `UEDITOR_AUTH=none`, since these checks upload without a credential, and `extraEnv`), the
 * data folder and the backup folder.
 */
async function machine(
  t: TestContext,
  extraEnv: string[],
  shellEnv: Record<string, string> = {},
): Promise<Machine> {
  const root = await mkdtemp(join(tmpdir(), 'ue-machine-'))
  t.after(() => rm(root, { recursive: true, force: true }))
  const dataDir = join(root, 'var/lib/ueditor')
  const backups = join(root, 'var/backups/ueditor')
  const envFile = join(root, 'etc/ueditor/ueditor.env')
  const bin = join(root, 'opt/ueditor/node_modules/.bin/ueditor-server')
  await mkdir(join(root, 'etc/ueditor'), { recursive: true })
  await mkdir(join(root, 'opt/ueditor/node_modules/.bin'), { recursive: true })
  await mkdir(dataDir, { recursive: true })
  await mkdir(backups, { recursive: true })
  await writeFile(bin, `#!/bin/sh\nexec "${process.execPath}" "${MAIN}" "$@"\n`)
  await chmod(bin, 0o755)
  const rewrite = (command: string) =>
    command
      .replaceAll('/opt/ueditor/', `${root}/opt/ueditor/`)
      .replaceAll('/etc/ueditor/', `${root}/etc/ueditor/`)
      .replaceAll('/var/lib/ueditor', dataDir)
      .replaceAll('/var/backups/ueditor', backups)
      // One user here: the service's user is whoever runs the test.
      .replaceAll('sudo -u ueditor ', '')
  const documented = documentedBlock(
    'deploy.md',
    '# /etc/ueditor/ueditor.env: NAME=value lines (no quotes needed, no "export")',
  )
  assert.match(documented, /^PORT=8080$/m)
  await writeFile(
    envFile,
    `${rewrite(documented).replace(/^PORT=8080$/m, 'PORT=0')}${['UEDITOR_AUTH=none', ...extraEnv].map((l) => `${l}\n`).join('')}`,
  )

  let server: { child: ChildProcess; url: string } | undefined
  t.after(() => server?.child.kill('SIGKILL'))
  const sh = (command: string) => runToEnd('sh', ['-c', command], shellEnv, root)
  const m: Machine = {
    root,
    dataDir,
    backups,
    envFile,
    rewrite,
    sh,
    url: () => {
      assert.ok(server, 'the service runs')
      return server.url
    },
    async start() {
      assert.equal(server, undefined, 'started twice')
      const child = spawn(process.execPath, [MAIN, '--env-file', envFile], {
        env: { PATH: process.env.PATH },
        cwd: dataDir,
        stdio: ['ignore', 'ignore', 'pipe'],
      })
      let stderr = ''
      const url = await new Promise<string>((resolve, reject) => {
        child.stderr?.on('data', (c) => {
          stderr += c
          const found = /listening on (http:\/\/\S+)/.exec(stderr)
          if (found?.[1]) resolve(found[1])
        })
        child.once('exit', (code) => reject(new Error(`exited with ${code}:\n${stderr}`)))
      })
      server = { child, url }
    },
    async stop() {
      assert.ok(server, 'stopped while not running')
      const { child } = server
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      assert.equal(await exited, 0)
      server = undefined
    },
    async runBlock(block) {
      let reconciled: { code: number | null; stdout: string } | undefined
      for (const command of commandsOf(block)) {
        if (command === 'sudo systemctl stop ueditor') await m.stop()
        else if (command === 'sudo systemctl start ueditor') await m.start()
        else {
          const local = rewrite(command)
          assert.doesNotMatch(local, /\bsudo\b|(^|[\s=])\/(var|etc|opt)\//, local)
          const out = await sh(local)
          if (/ files reconcile/.test(command)) reconciled = out
          else assert.equal(out.code, 0, `${command}\n${out.stdout}${out.stderr}`)
        }
      }
      return reconciled
    },
  }
  return m
}

async function upload(m: Machine, name: string): Promise<string> {
  const form = new FormData()
  form.append('upfile', blob(png(10, 10, { noise: true }), 'image/png'), name)
  const res = await fetch(`${m.url()}/ueditor?action=image`, { method: 'POST', body: form })
  const body = (await res.json()) as { state: string; url: string }
  assert.equal(body.state, 'SUCCESS', JSON.stringify(body))
  return body.url
}

async function listed(m: Machine): Promise<string[]> {
  const res = await fetch(`${m.url()}/ueditor?action=listImage&start=0&size=100`)
  const page = (await res.json()) as { list?: { url: string }[] }
  return (page.list ?? []).map((item) => item.url).sort()
}

const keyOf = (url: string) => url.slice('/uploads/'.length)

test('the documented cron lines run as written: with nothing to report each prints nothing, reconcile prints only what is left, and nothing creates an index', async (t) => {
  const m = await machine(t, [
    'UEDITOR_LOG_LEVEL=warn',
    'UEDITOR_IMAGES_ENABLED=false',
    'UEDITOR_DOCUMENTS_ENABLED=true',
  ])
  const unit = documentedBlock('deploy.md', '[Unit]')
  assert.match(unit, /^User=ueditor$/m)
  assert.match(unit, /^EnvironmentFile=\/etc\/ueditor\/ueditor\.env$/m)
  const jobs = cronJobs(CRON_LOCAL)
  jobRunning(jobs, 'index backup ')
  jobRunning(jobs, 'files orphans')
  const reconcile = jobRunning(jobs, 'files reconcile')
  assert.equal(jobs.length, 3)

  // Before the service's first start there is no index, and no job makes one.
  for (const job of jobs) {
    const early = await m.sh(m.rewrite(job))
    assert.equal(early.code, 1, job)
    assert.match(early.stderr, new RegExp(`^No index at ${m.dataDir}/ueditor.db; `))
  }
  assert.deepEqual(await readdir(m.dataDir), [])
  assert.deepEqual(await readdir(m.backups), [])

  await m.start()
  const first = await upload(m, 'a.png')
  const second = await upload(m, 'b.png')
  // Nothing to report: each job prints nothing at all, so cron mails nothing.
  for (const job of jobs)
    assert.deepEqual(await m.sh(m.rewrite(job)), { code: 0, stdout: '', stderr: '' }, job)
  assert.ok(existsSync(join(m.backups, 'ueditor.db')))
  for (const url of [first, second]) assert.ok(existsSync(join(m.backups, 'uploads', keyOf(url))))

  const uploads = join(m.dataDir, 'uploads')
  const orphan = renderKey(EDITOR_DEFAULTS.imagePathFormat, '.png', new Date(2026, 0, 2))
  await mkdir(join(uploads, orphan, '..'), { recursive: true })
  await writeFile(join(uploads, orphan), png(2, 2))
  await writeFile(join(uploads, 'image', 'notes.txt'), 'hand-placed')
  const found = await m.sh(m.rewrite(reconcile))
  assert.equal(found.code, 3, found.stderr)
  assert.match(found.stdout, new RegExp(`^object without row: ${orphan} \\(`, 'm'))
  assert.doesNotMatch(found.stdout, /^foreign object/m, 'the foreign file is only counted')
  assert.match(
    found.stdout,
    /1 object without a row, 0 rows without an object, 1 foreign object left alone\./,
  )
  await m.stop()
})

test('the documented cron lines for S3 uploads run as written and print nothing when there is nothing to report', async (t) => {
  if (awsCliMissing(t)) return
  const s3 = await startS3rver()
  t.after(() => s3.close())
  const bucket = await s3.createBucket()
  const m = await machine(
    t,
    [
      'UEDITOR_LOG_LEVEL=warn',
      'UEDITOR_IMAGES_ENABLED=false',
      'UEDITOR_DOCUMENTS_ENABLED=true',
      ...Object.entries(s3.storageEnv(bucket)).map(([name, value]) => `${name}=${value}`),
      'UEDITOR_S3_PREFIX=site',
    ],
    awsCliEnv(s3.endpoint),
  )
  const jobs = cronJobs(CRON_S3)
  assert.equal(jobs.length, 3)
  // The reconcile and orphans lines are those of local uploads.
  const local = cronJobs(CRON_LOCAL)
  for (const command of ['files reconcile', 'files orphans'])
    assert.equal(jobRunning(jobs, command), jobRunning(local, command))
  const backup = jobRunning(jobs, 'index backup ')
  assert.ok(backup.includes(' aws s3 sync ') && backup.includes('s3://my-bucket/site/'), backup)
  // The AWS CLI of Debian 12 ignores AWS_ENDPOINT_URL: the endpoint goes on its command line.
  const here = (job: string) =>
    m
      .rewrite(job)
      .replaceAll('s3://my-bucket/', `s3://${bucket}/`)
      .replaceAll(' aws s3 ', ` aws --endpoint-url ${s3.endpoint} s3 `)

  await m.start()
  const files = [await upload(m, 'a.png'), await upload(m, 'b.png')]
  for (const job of jobs)
    assert.deepEqual(await m.sh(here(job)), { code: 0, stdout: '', stderr: '' }, job)
  assert.ok(existsSync(join(m.backups, 'ueditor.db')))
  for (const url of files) assert.ok(existsSync(join(m.backups, 'uploads', keyOf(url))), url)
  await m.stop()
})

/** Two uploads, the documented backup, a third upload, the documented restore. */
async function backupAndRestore(
  t: TestContext,
  m: Machine,
  backupBlock: string,
  restoreBlock: string,
  /** Deletes one stored object, as a lost disk or a wrong command would. */
  lose: (key: string) => Promise<void> = (key) => rm(join(m.dataDir, 'uploads', key)),
) {
  await m.start()
  const a = await upload(m, 'a.png')
  const b = await upload(m, 'b.png')
  // The backup runs while the server goes on storing uploads.
  const during = Array.from({ length: 4 }, (_, i) => upload(m, `during-${i}.png`))
  assert.equal(await m.runBlock(backupBlock), undefined)
  const stored = await Promise.all(during)
  const after = await upload(m, 'after.png')
  const before = await listed(m)
  assert.equal(before.length, 7)
  // The files of the first two are lost: only the backup has them.
  for (const url of [a, b]) await lose(keyOf(url))
  for (const url of [a, b]) assert.equal((await fetch(`${m.url()}${url}`)).status, 404)

  const reconciled = await m.runBlock(restoreBlock)
  assert.ok(reconciled, 'the restore ends with files reconcile')
  // What was in the index backup is listed and served again, from the restored files.
  const restored = await listed(m)
  for (const url of [a, b]) {
    assert.ok(restored.includes(url), url)
    assert.equal((await fetch(`${m.url()}${url}`)).status, 200)
  }
  assert.ok(!restored.includes(after), 'an upload after the backup is not in the restored index')
  // Uploads after the index backup (and maybe those during it) are objects without a row.
  assert.equal(reconciled.code, 3, reconciled.stdout)
  assert.match(reconciled.stdout, new RegExp(`^object without row: ${keyOf(after)} \\(`, 'm'))
  assert.match(reconciled.stdout, / 0 rows without an object/)
  for (const url of [...stored, a, b]) {
    assert.equal(restored.includes(url), !reconciled.stdout.includes(keyOf(url)), url)
    assert.equal((await fetch(`${m.url()}${url}`)).status, 200, url)
  }
  await m.stop()
  t.diagnostic(`restored ${restored.length} of ${before.length} uploads`)
}

test('the documented SQLite and local-uploads backup and restore run as written and bring back the index and its files', async (t) => {
  const m = await machine(t, ['UEDITOR_LOG_LEVEL=warn', 'UEDITOR_IMAGES_ENABLED=false'])
  await backupAndRestore(
    t,
    m,
    documentedBlock('operations.md', '# Back up: SQLite index, then local uploads'),
    documentedBlock('operations.md', '# Restore: SQLite index and local uploads'),
  )
})

test('the documented PostgreSQL and local-uploads backup and restore run as written with pg_dump and pg_restore', async (t) => {
  const lane = await startPostgresLane()
  if ('unavailable' in lane) return skipOrFail(t, lane.unavailable)
  t.after(() => lane.cluster.stop())
  const url = await lane.cluster.createDatabase()
  const documentedUrl = 'postgresql://ueditor@127.0.0.1:5432/ueditor'
  const m = await machine(t, [
    'UEDITOR_LOG_LEVEL=warn',
    'UEDITOR_IMAGES_ENABLED=false',
    `UEDITOR_DATABASE_URL=${url}`,
  ])
  const withUrl = (block: string) => {
    assert.ok(block.includes(documentedUrl), block)
    return block.replaceAll(documentedUrl, url)
  }
  const refused = await m.sh(
    m.rewrite(
      `/opt/ueditor/node_modules/.bin/ueditor-server --env-file /etc/ueditor/ueditor.env index backup /var/backups/ueditor/x.db`,
    ),
  )
  assert.equal(refused.code, 2)
  assert.match(refused.stderr, /back it up with pg_dump/)
  await backupAndRestore(
    t,
    m,
    withUrl(documentedBlock('operations.md', '# Back up: PostgreSQL index, then local uploads')),
    withUrl(documentedBlock('operations.md', '# Restore: PostgreSQL index and local uploads')),
  )
})

test('the documented SQLite and S3 backup and restore run as written with the AWS CLI against the bucket', async (t) => {
  if (awsCliMissing(t)) return
  const s3 = await startS3rver()
  t.after(() => s3.close())
  const bucket = await s3.createBucket()
  const m = await machine(
    t,
    [
      'UEDITOR_LOG_LEVEL=warn',
      'UEDITOR_IMAGES_ENABLED=false',
      ...Object.entries(s3.storageEnv(bucket)).map(([name, value]) => `${name}=${value}`),
      'UEDITOR_S3_PREFIX=site',
    ],
    awsCliEnv(s3.endpoint),
  )
  // The endpoint is also given on the command line: AWS CLI releases before 2.13 (Debian 12's
  // awscli among them) ignore AWS_ENDPOINT_URL and would leave the machine.
  const withBucket = (block: string) => {
    assert.ok(block.includes('s3://my-bucket/site/'), block)
    return block
      .replaceAll('s3://my-bucket/', `s3://${bucket}/`)
      .replaceAll(/^aws s3 /gm, `aws --endpoint-url ${s3.endpoint} s3 `)
  }
  await backupAndRestore(
    t,
    m,
    withBucket(documentedBlock('operations.md', '# Back up: SQLite index, then S3 uploads')),
    withBucket(documentedBlock('operations.md', '# Restore: SQLite index and S3 uploads')),
    async (key) => {
      await s3.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: `site/${key}` }))
    },
  )
})
