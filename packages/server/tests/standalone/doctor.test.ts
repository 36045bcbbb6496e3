import assert from 'node:assert/strict'
import { mkdir, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { ListMultipartUploadsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3'
import { unknownEditorKeys } from '../../src/config/editor-keys.js'
import { loadConfig } from '../../src/config/load.js'
import { resolveSqliteEngine } from '../../src/db/open.js'
import { takesDoc, wordSupport, wordSupportFix, wordSupportLine } from '../../src/word/support.js'
import { runCli } from '../helpers/cli.js'
import { fakeLibreOffice } from '../helpers/libreoffice.js'
import { freePort } from '../helpers/ports.js'
import { startS3FaultProxy } from '../helpers/s3-fault-proxy.js'
import { S3RVER_CREDENTIALS, startS3rver } from '../helpers/s3rver.js'
import { startTestServer } from '../helpers/start-server.js'
import { tempDir } from '../helpers/temp-dir.js'
import { test } from '../helpers/test.js'

const ENGINE = resolveSqliteEngine('auto')

/** What doctor says of the Word import with the LibreOffice at `soffice`: `.doc` needs Writer. */
function wordImport(soffice: string): { ok: boolean; lines: string[] } {
  const support = wordSupport({
    images: { metafiles: { soffice } },
    word: { docWithNetwork: false },
  } as never)
  const ok = takesDoc(support)
  return {
    ok,
    lines: ok
      ? [`ok    word import: ${wordSupportLine(support)}`]
      : [`warn  word import: ${wordSupportLine(support)}`, `      fix: ${wordSupportFix(support)}`],
  }
}

/** A port held by a listener (one that hangs up on whoever connects) until the test ends. */
async function heldPort(t: { after(fn: () => Promise<void>): void }): Promise<number> {
  const holder: Server = createServer((socket) => socket.destroy())
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => holder.close(() => resolve())))
  return (holder.address() as { port: number }).port
}

/** The doctor's lines with the varying free-space figures blanked. */
function lines(stdout: string): string[] {
  return stdout
    .trimEnd()
    .split('\n')
    .map((l) => l.replace(/[\d.]+ (GiB|MiB) free/, 'N free'))
}

/** The word line for a LibreOffice with Draw and Writer at `soffice`. */
const wordReady = (soffice: string) =>
  `ok    word: LibreOffice ${soffice}: Word pictures (EMF/WMF) are converted to PNG, Writer found for .doc import`

test('doctor passes a fresh setup and says what start will create, writing nothing', async (t) => {
  const dir = await tempDir(t, 'ueditor-doctor-')
  const port = await freePort()
  const soffice = await fakeLibreOffice(await tempDir(t, 'ueditor-lo-'))
  const out = await runCli(
    ['doctor'],
    { UEDITOR_DATA_DIR: join(dir, 'data'), PORT: String(port), UEDITOR_IMAGES_SOFFICE: soffice },
    dir,
  )
  assert.equal(out.code, 0, out.stdout + out.stderr)
  assert.deepEqual(lines(out.stdout), [
    'ok    config: valid (UEDITOR_* variables over the defaults)',
    'warn  auth: not configured: uploads, listings and captures are refused',
    '      fix: set UEDITOR_AUTH_TOKENS, UEDITOR_AUTH_JWT_SECRET or UEDITOR_AUTH_JWKS_URL (docs/auth.md), or UEDITOR_AUTH=none (auth.mode: none) to let anyone who can reach the server in on purpose',
    wordReady(soffice),
    `ok    port: 127.0.0.1:${port} is free`,
    `ok    data folder: ${dir}/data does not exist yet; it is created at start`,
    `ok    free space: N free on the upload volume (${dir}); uploads stop below limits.minFreeBytes = 128 MiB`,
    `ok    database: SQLite ${dir}/data/ueditor.db through ${ENGINE}: no file yet; it is created at start`,
    ...wordImport(soffice).lines,
    '',
    wordImport(soffice).ok ? 'Ready to serve (1 warning).' : 'Ready to serve (2 warnings).',
  ])
  assert.equal(out.stderr, '')
  assert.deepEqual(await import('node:fs').then((fs) => fs.readdirSync(dir)), [])
})

test('doctor finds the database of a data folder a server has used', async (t) => {
  const srv = await startTestServer(t)
  const out = await runCli(['doctor'], { UEDITOR_DATA_DIR: srv.dataDir })
  assert.equal(out.code, 0, out.stdout)
  assert.ok(
    out.stdout.includes(
      `ok    database: SQLite ${srv.dataDir}/ueditor.db through ${ENGINE} answers\n`,
    ),
    out.stdout,
  )
  assert.ok(out.stdout.includes(`ok    data folder: ${srv.dataDir} is writable\n`), out.stdout)
})

test('doctor names each broken part of a setup and what to do about it', async (t) => {
  const dir = await tempDir(t, 'ueditor-doctor-')
  const port = await freePort()
  await writeFile(join(dir, 'not-a-folder'), 'x')
  await mkdir(join(dir, 'data'))
  await writeFile(
    join(dir, 'data', 'ueditor.db'),
    'this is not a database, it is text '.repeat(200),
  )
  const broken = {
    UEDITOR_DATA_DIR: join(dir, 'data'),
    UEDITOR_STORAGE_ROOT: join(dir, 'not-a-folder'),
    UEDITOR_LIMIT_MIN_FREE_BYTES: String(2 ** 50),
    UEDITOR_STATIC_DIR: join(dir, 'site'),
    UEDITOR_CONFIG: 'ueditor.json',
  }
  const out = await runCli(['doctor'], broken, dir)
  await writeFile(join(dir, 'ueditor.json'), '{"editor": {"imageMaxSzie": 5}}')
  const soffice = await fakeLibreOffice(await tempDir(t, 'ueditor-lo-'))
  const again = await runCli(
    ['doctor'],
    { ...broken, HOST: '0.0.0.0', PORT: String(port), UEDITOR_IMAGES_SOFFICE: soffice },
    dir,
  )
  // Without the file the config itself is the problem, and nothing else is checked.
  assert.equal(out.code, 1)
  assert.match(out.stdout, /^fail {2}config: invalid:\n {6}- config file ueditor\.json: ENOENT/)
  assert.match(out.stdout, /fix: correct the values listed/)

  assert.equal(again.code, 1)
  assert.deepEqual(lines(again.stdout), [
    'ok    config: valid (ueditor.json and UEDITOR_* variables over the defaults)',
    'warn  config: unknown editor key `imageMaxSzie` (did you mean `imageMaxSize`?): it is passed to the browser as is; list it in `editorExtraKeys` if it is deliberate',
    '      fix: rename it to imageMaxSize',
    'fail  auth: not configured: uploads, listings and captures are refused, and the start refuses 0.0.0.0, which is not loopback',
    '      fix: set UEDITOR_AUTH_TOKENS, UEDITOR_AUTH_JWT_SECRET or UEDITOR_AUTH_JWKS_URL (docs/auth.md), or UEDITOR_AUTH=none (auth.mode: none) to let anyone who can reach the server in on purpose',
    wordReady(soffice),
    `warn  listen: 0.0.0.0:${port} accepts connections from every network`,
    '      fix: bind to 127.0.0.1 behind a reverse proxy (docs/deploy.md), or firewall the port',
    `ok    port: 0.0.0.0:${port} is free`,
    `ok    data folder: ${dir}/data is writable`,
    `fail  upload folder: ${dir}/not-a-folder exists but is not a folder`,
    '      fix: move that file away, or point the setting at a folder',
    `fail  static site: ${dir}/site is not a folder`,
    '      fix: create it and put the editor files and your page in it, or unset UEDITOR_STATIC_DIR',
    `fail  free space: N free on the upload volume (${dir}/not-a-folder); uploads stop below limits.minFreeBytes = 1048576.0 GiB`,
    '      fix: free some space or move the data folder to a larger volume (UEDITOR_DATA_DIR)',
    `fail  database: SQLite ${dir}/data/ueditor.db through ${ENGINE}: cannot open the SQLite index: file is not a database`,
    '      fix: restore the file from a backup or point index.file (UEDITOR_SQLITE_FILE) elsewhere',
    ...wordImport(soffice).lines,
    '',
    '5 problems to fix before the server can run.',
  ])
})

test('doctor fails a port in use and a static folder without the editor, and passes both once fixed', async (t) => {
  const dir = await tempDir(t, 'ueditor-doctor-')
  const held = await heldPort(t)
  await mkdir(join(dir, 'site'))
  await writeFile(join(dir, 'site', 'index.html'), '<!doctype html><title>page</title>')
  const env = {
    UEDITOR_DATA_DIR: join(dir, 'data'),
    UEDITOR_STATIC_DIR: join(dir, 'site'),
    UEDITOR_AUTH: 'none',
  }
  const broken = await runCli(['doctor'], { ...env, PORT: String(held) }, dir)
  assert.equal(broken.code, 1, broken.stdout)
  assert.ok(
    broken.stdout.includes(
      `fail  port: 127.0.0.1:${held} is in use by another process (not a ueditor-server: its /healthz does not answer as one)\n` +
        `      fix: stop the other server (ss -ltnp 'sport = :${held}' names it) or choose another port (PORT, http.port)\n`,
    ),
    broken.stdout,
  )
  assert.ok(
    broken.stdout.includes(
      `fail  static site: ${dir}/site has no ueditor.all.js (looked 3 folders deep): a page that loads the editor from this server gets 404\n`,
    ),
    broken.stdout,
  )
  assert.match(broken.stdout, /\n2 problems to fix before the server can run\.\n$/)
  assert.doesNotMatch(broken.stdout, /Ready to serve/)

  await mkdir(join(dir, 'site', 'ueditor-plus'))
  await writeFile(join(dir, 'site', 'ueditor-plus', 'ueditor.all.js'), '// the editor')
  const port = await freePort()
  const fixed = await runCli(['doctor'], { ...env, PORT: String(port) }, dir)
  assert.equal(fixed.code, 0, fixed.stdout)
  assert.ok(fixed.stdout.includes(`ok    port: 127.0.0.1:${port} is free\n`), fixed.stdout)
  assert.ok(
    fixed.stdout.includes(
      `ok    static site: ${dir}/site is served at / (editor at /ueditor-plus/ueditor.all.js)\n`,
    ),
    fixed.stdout,
  )
  assert.match(fixed.stdout, /\nReady to serve\.\n$/)
})

test('doctor refuses a misspelt UEDITOR_ variable and unknown config keys at any depth, naming the nearest real one', async (t) => {
  const dir = await tempDir(t, 'ueditor-doctor-')
  await writeFile(
    join(dir, 'ueditor.json'),
    JSON.stringify({ auth: { tokns: [], jwt: { audiense: 'x' } }, http: { prot: 80 }, limts: {} }),
  )
  const out = await runCli(
    ['doctor'],
    {
      UEDITOR_DATA_DIR: join(dir, 'data'),
      UEDITOR_AUTH_TOKEN: 'alice:alice-token-0123456789abcdef',
      UEDITOR_IMAGE_MAXSIZE: '1024',
      UEDITOR_CONFIG: 'ueditor.json',
    },
    dir,
  )
  assert.equal(out.code, 1, out.stdout)
  assert.match(out.stdout, /^fail {2}config: invalid:\n/)
  for (const line of [
    '- unknown variable UEDITOR_AUTH_TOKEN (did you mean UEDITOR_AUTH_TOKENS?): the server does not read it, so what it was meant to set is not in force; rename it, or unset it',
    '- unknown variable UEDITOR_IMAGE_MAXSIZE (did you mean UEDITOR_IMAGE_MAX_SIZE?)',
    '- auth.tokns (from ueditor.json): unknown key (did you mean auth.tokens?)',
    '- auth.jwt.audiense (from ueditor.json): unknown key (did you mean auth.jwt.audience?)',
    '- http.prot (from ueditor.json): unknown key (did you mean http.port?)',
    '- limts (from ueditor.json): unknown key (did you mean limits?)',
  ])
    assert.ok(out.stdout.includes(line), `${line}\nmissing in:\n${out.stdout}`)
  // The token itself is never repeated.
  assert.doesNotMatch(out.stdout, /alice-token/)
})

test('doctor warns about a UEDITOR_ variable unlike any of its own, names the auth mode, and reads sizes with units', async (t) => {
  const dir = await tempDir(t, 'ueditor-doctor-')
  const soffice = await fakeLibreOffice(await tempDir(t, 'ueditor-lo-'))
  const port = await freePort()
  const out = await runCli(
    ['doctor'],
    {
      UEDITOR_DATA_DIR: join(dir, 'data'),
      PORT: String(port),
      UEDITOR_FRONTEND_BUILD_ID: '42',
      UEDITOR_AUTH_TOKENS: 'alice:alice-token-0123456789abcdef,bob:bob-token-0123456789abcdef',
      UEDITOR_IMAGE_MAX_SIZE: '2MB',
      UEDITOR_LIMIT_MIN_FREE_BYTES: '64 MiB',
      UEDITOR_IMAGES_SOFFICE: soffice,
    },
    dir,
  )
  assert.equal(out.code, 0, out.stdout)
  assert.deepEqual(lines(out.stdout).slice(0, 6), [
    'ok    config: valid (UEDITOR_* variables over the defaults)',
    'warn  config: unknown variable UEDITOR_FRONTEND_BUILD_ID: the server does not read it (ueditor-server --help lists every variable)',
    '      fix: unset UEDITOR_FRONTEND_BUILD_ID if it is not meant for this server',
    'ok    auth: static tokens (2 users)',
    wordReady(soffice),
    `ok    port: 127.0.0.1:${port} is free`,
  ])
  assert.match(out.stdout, /uploads stop below limits\.minFreeBytes = 64 MiB/)
  assert.match(out.stdout, /\nReady to serve \(1 warning\)\.\n$/)

  const bad = await runCli(
    ['doctor'],
    { UEDITOR_DATA_DIR: join(dir, 'data'), UEDITOR_IMAGE_MAX_SIZE: '2 megs' },
    dir,
  )
  assert.equal(bad.code, 1)
  assert.ok(
    bad.stdout.includes(
      '- editor.imageMaxSize (from UEDITOR_IMAGE_MAX_SIZE=2 megs): must be a size: a number of bytes (2097152) or a number and a unit: 512KB, 2MB, 1.5GiB',
    ),
    bad.stdout,
  )
})

test('doctor writes, reads and deletes a probe in a reachable bucket, and fails an unreachable one', async (t) => {
  const s3 = await startS3rver()
  t.after(() => s3.close())
  const bucket = await s3.createBucket()
  const dir = await tempDir(t, 'ueditor-doctor-')
  const s3Env = {
    UEDITOR_DATA_DIR: join(dir, 'data'),
    UEDITOR_S3_BUCKET: bucket,
    UEDITOR_S3_ENDPOINT: s3.endpoint,
    UEDITOR_S3_FORCE_PATH_STYLE: 'true',
    UEDITOR_S3_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
    UEDITOR_S3_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
  }
  const good = await runCli(['doctor'], s3Env, dir)
  assert.equal(good.code, 0, good.stdout)
  assert.ok(
    good.stdout.includes(
      `ok    bucket: bucket ${bucket} at ${s3.endpoint} accepts writes, reads, deletes and multipart uploads (create, list parts, abort)\n`,
    ),
    good.stdout,
  )
  const missing = await runCli(['doctor'], { ...s3Env, UEDITOR_S3_BUCKET: 'no-such-bucket' }, dir)
  assert.equal(missing.code, 1)
  assert.match(
    missing.stdout,
    /fail {2}bucket: bucket no-such-bucket at http:\/\/127\.0\.0\.1:\d+: .+\n {6}fix: check the bucket name/,
  )
  assert.ok(!(missing.stdout + missing.stderr).includes(S3RVER_CREDENTIALS.secretAccessKey))
})

test('doctor warns when CORS origins are set but the config answer names relative URLs, and not once publicUrl is absolute', async (t) => {
  const dir = await tempDir(t, 'ueditor-doctor-')
  const env = {
    UEDITOR_DATA_DIR: join(dir, 'data'),
    UEDITOR_CORS_ORIGINS: 'https://www.example.com',
    UEDITOR_AI_BASE_URL: 'https://api.example.com/v1',
    UEDITOR_AI_API_KEY: 'sk-doctor-test-0123456789',
    UEDITOR_AI_MODEL: 'm',
  }
  const relative = await runCli(['doctor'], env, dir)
  assert.equal(relative.code, 0, relative.stdout)
  const found = lines(relative.stdout).filter((l) =>
    /cross-origin|^ {6}fix: set UEDITOR_PUBLIC_URL/.test(l),
  )
  assert.deepEqual(found, [
    "warn  cross-origin: http.corsOrigins is set (the editor page is on another origin), but the config answer names relative URLs: stored files (/uploads/), formulaConfig.imageUrlTemplate (/formula.svg?{}), ai.driverConfig.url (/ueditor?action=ai), uploadTusUrl (/tus); the browser resolves them against the page's origin, not this server's, so stored images break, formulas do not render and the AI dialog and resumable uploads get 404",
    "      fix: set UEDITOR_PUBLIC_URL (publicUrl) to this server's absolute URL of stored files, such as https://ue.example.com/uploads/; the formula, AI and upload URLs follow it unless set on their own (docs/deploy.md)",
  ])
  const absolute = await runCli(
    ['doctor'],
    { ...env, UEDITOR_PUBLIC_URL: 'https://ue.example.com/uploads/' },
    dir,
  )
  assert.equal(absolute.code, 0, absolute.stdout)
  assert.doesNotMatch(absolute.stdout, /cross-origin/)
})

test('doctor says whether the webhook host takes connections, posting nothing to it, and warns when it does not', async (t) => {
  const dir = await tempDir(t, 'ueditor-doctor-')
  const posted: string[] = []
  const receiver = createServer((socket) => {
    socket.on('data', (chunk) => posted.push(chunk.toString()))
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => receiver.close(() => resolve())))
  const hook = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks/ueditor`
  const env = (url: string) => ({
    UEDITOR_DATA_DIR: join(dir, 'data'),
    PORT: String(0),
    UEDITOR_AUTH: 'none',
    UEDITOR_WEBHOOK_URL: url,
    UEDITOR_WEBHOOK_SECRET: 'a-webhook-secret-of-some-length',
  })
  const reachable = await runCli(['doctor'], env(hook), dir)
  assert.equal(reachable.code, 0, reachable.stdout)
  assert.ok(
    reachable.stdout.includes(`ok    webhook: ${hook} takes connections\n`),
    reachable.stdout,
  )
  assert.deepEqual(posted, [])

  const closed = `http://127.0.0.1:${await freePort()}/hooks/ueditor`
  const unreachable = await runCli(['doctor'], env(closed), dir)
  assert.equal(unreachable.code, 0, 'a warning, not a failure')
  assert.match(
    unreachable.stdout,
    new RegExp(
      `warn  webhook: ${closed.replaceAll('.', '\\.')} cannot be reached \\(ECONNREFUSED\\); events wait in the outbox.*\\n      fix: check UEDITOR_WEBHOOK_URL`,
    ),
  )
  assert.match(unreachable.stdout, /Ready to serve \(1 warning\)/)
})

test('doctor fails a bucket without multipart uploads, which resumable and direct uploads need, and passes one with them', async (t) => {
  const dir = await tempDir(t, 'ueditor-doctor-')
  const port = await freePort()
  const base = { UEDITOR_DATA_DIR: join(dir, 'data'), PORT: String(port) }
  // An S3 server that creates multipart uploads and takes parts, but has no ListParts and no
  // AbortMultipartUpload, as some S3-compatible stores answer them.
  const s3 = await startS3rver()
  t.after(() => s3.close())
  const front = await startS3FaultProxy(s3.endpoint)
  t.after(() => front.close())
  front.fail(
    (req) =>
      /[?&]uploadId=/.test(req.url ?? '') && (req.method === 'GET' || req.method === 'DELETE'),
    {
      status: 501,
      code: 'NotImplemented',
      message: 'A header you provided implies functionality that is not implemented',
    },
  )
  const plain = {
    endpoint: front.endpoint,
    storageEnv: (bucket: string) => ({
      ...s3.storageEnv(bucket),
      UEDITOR_S3_ENDPOINT: front.endpoint,
    }),
  }
  const plainBucket = await s3.createBucket()
  const without = await runCli(['doctor'], { ...base, ...plain.storageEnv(plainBucket) }, dir)
  assert.equal(without.code, 1, without.stdout)
  assert.match(
    without.stdout,
    new RegExp(
      `^fail  bucket: bucket ${plainBucket} at ${plain.endpoint.replaceAll('.', '\\.')} accepts writes, reads and deletes, but not multipart uploads: ListParts failed \\(.+\\); resumable uploads \\(tus\\) and direct uploads would fail with 500\n` +
        ' {6}fix: use an S3 service with multipart uploads \\(CreateMultipartUpload, ListParts, AbortMultipartUpload\\), or turn off UEDITOR_TUS_ENABLED=false and UEDITOR_DIRECT_UPLOADS=false\n',
      'm',
    ),
  )
  // With neither resumable nor direct uploads, objects are all the server needs of the bucket.
  const objectsOnly = await runCli(
    ['doctor'],
    {
      ...base,
      ...plain.storageEnv(plainBucket),
      UEDITOR_TUS_ENABLED: 'false',
      UEDITOR_DIRECT_UPLOADS: 'false',
    },
    dir,
  )
  assert.equal(objectsOnly.code, 0, objectsOnly.stdout)
  assert.match(
    objectsOnly.stdout,
    new RegExp(
      `^ok    bucket: bucket ${plainBucket} at .+ accepts writes, reads and deletes$`,
      'm',
    ),
  )

  const moto = s3
  const bucket = await moto.createBucket()
  const good = await runCli(['doctor'], { ...base, ...moto.storageEnv(bucket) }, dir)
  assert.equal(good.code, 0, good.stdout + good.stderr)
  assert.match(
    good.stdout,
    new RegExp(
      `^ok    bucket: bucket ${bucket} at ${moto.endpoint.replaceAll('.', '\\.')} accepts writes, reads, deletes and multipart uploads \\(create, list parts, abort\\)$`,
      'm',
    ),
  )
  // The server's own key for direct uploads is no unknown key, and the SDK's notice is off.
  assert.doesNotMatch(good.stdout, /unknown editor key/)
  assert.equal(good.stderr, '')
  // The probe leaves nothing behind: no object and no open multipart upload.
  const objects = await moto.client.send(new ListObjectsV2Command({ Bucket: bucket }))
  assert.equal(objects.KeyCount ?? 0, 0)
  const open = await moto.client.send(new ListMultipartUploadsCommand({ Bucket: bucket }))
  assert.deepEqual(open.Uploads ?? [], [])
})

test('the key the server adds for direct uploads (uploadDirectUrl) is not reported as an unknown editor key', () => {
  const config = loadConfig({
    env: {
      UEDITOR_STORAGE: 's3',
      UEDITOR_S3_BUCKET: 'bucket',
      UEDITOR_S3_REGION: 'us-east-1',
      UEDITOR_S3_ENDPOINT: 'http://127.0.0.1:9',
    },
  })
  assert.equal(typeof config.editor.uploadDirectUrl, 'string')
  assert.deepEqual(unknownEditorKeys(config.editor, config.editorExtraKeys), [])
})

test('doctor next to the running server finds the port held by it and passes; a foreign server on the port still fails', async (t) => {
  const srv = await startTestServer(t)
  const port = new URL(srv.url).port
  const beside = await runCli(['doctor'], {
    UEDITOR_DATA_DIR: srv.dataDir,
    PORT: port,
    UEDITOR_AUTH: 'none',
  })
  assert.equal(beside.code, 0, beside.stdout)
  assert.ok(
    beside.stdout.includes(
      `ok    port: 127.0.0.1:${port} is held by a running ueditor-server (it answers /healthz, and /readyz: ready)\n`,
    ),
    beside.stdout,
  )
  assert.match(beside.stdout, /\nReady to serve\.\n$/)

  // Another program answering /healthz as many do is not this server.
  const { createServer: createHttpServer } = await import('node:http')
  const foreign = createHttpServer((req, res) => {
    res.setHeader('content-type', 'application/json')
    res.end(req.url === '/healthz' ? '{"status":"ok"}' : '{"status":"ready"}')
  })
  await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => foreign.close(() => resolve())))
  const other = String((foreign.address() as { port: number }).port)
  const taken = await runCli(['doctor'], {
    UEDITOR_DATA_DIR: srv.dataDir,
    PORT: other,
    UEDITOR_AUTH: 'none',
  })
  assert.equal(taken.code, 1, taken.stdout)
  assert.ok(
    taken.stdout.includes(
      `fail  port: 127.0.0.1:${other} is in use by another process (not a ueditor-server: its /healthz does not answer as one)\n`,
    ),
    taken.stdout,
  )
})

test('doctor says it cannot see whether the proxy forwards the client address and how to check, and warns about a trusted proxy a loopback bind never hears from', async (t) => {
  const dir = await tempDir(t, 'ueditor-doctor-')
  const env = {
    UEDITOR_DATA_DIR: join(dir, 'data'),
    PORT: String(await freePort()),
    UEDITOR_AUTH: 'none',
  }
  const loopback = await runCli(['doctor'], { ...env, UEDITOR_TRUST_PROXY: 'loopback' }, dir)
  assert.equal(loopback.code, 0, loopback.stdout)
  const proxyLines = lines(loopback.stdout).filter((l) => /^info {2}proxy:|^ {6}check:/.test(l))
  assert.equal(proxyLines.length, 2, loopback.stdout)
  assert.match(
    proxyLines[0] as string,
    /^info {2}proxy: the client's address is read from X-Forwarded-For on connections from loopback \(http\.trustProxy\); doctor does not pass through the proxy/,
  )
  assert.match(
    proxyLines[1] as string,
    /access line.*its client must be your own address, not the proxy's/,
  )
  // Information, not a warning: the documented setup is ready to serve without one.
  assert.match(loopback.stdout, /\nReady to serve\.\n$/)

  const elsewhere = await runCli(['doctor'], { ...env, UEDITOR_TRUST_PROXY: '10.0.0.5' }, dir)
  assert.equal(elsewhere.code, 0, elsewhere.stdout)
  assert.ok(
    elsewhere.stdout.includes(
      "warn  proxy: http.trustProxy (10.0.0.5) names no loopback address, but the server listens on 127.0.0.1, which only this machine reaches: the client's address is never read from X-Forwarded-For, and every visitor counts as the proxy\n" +
        '      fix: with the proxy on this machine, set UEDITOR_TRUST_PROXY=loopback; with the proxy elsewhere, listen on an address it reaches (HOST)\n',
    ),
    elsewhere.stdout,
  )
  assert.match(elsewhere.stdout, /Ready to serve \(1 warning\)/)
})
