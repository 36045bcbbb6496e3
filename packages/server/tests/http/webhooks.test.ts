import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { readdir, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadConfig } from '../../src/config/load.js'
import { signatureOf } from '../../src/events/signature.js'
import type { UeditorEvent } from '../../src/events/types.js'
import { verifyWebhookSignature } from '../../src/index.js'
import { createUeditorServer } from '../../src/server.js'
import { isUeError } from '../../src/shared/errors.js'
import { ALICE, BOB, bearer, deleteFile, recordingLogger, uploadFile } from '../helpers/auth.js'
import { runCli } from '../helpers/cli.js'
import { eventually } from '../helpers/eventually.js'
import { PDF } from '../helpers/fixtures.js'
import { rawSqlite } from '../helpers/sqlite.js'
import { startTestServer } from '../helpers/start-server.js'
import { tempDir } from '../helpers/temp-dir.js'
import { type TestContext, test } from '../helpers/test.js'
import { pause, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js'
import {
  type Database,
  type Engine,
  keyOf,
  listedUrls,
  SECRET,
  startNode,
  upload,
  webhookConfig,
  webhookScenarios,
} from './webhook-scenarios.js'

const sqlite: Engine = {
  name: 'SQLite',
  async database(t) {
    const file = join(await tempDir(t, 'ue-hook-db-'), 'index.db')
    return {
      index: { driver: 'sqlite', file },
      async exec(statement) {
        const raw = await rawSqlite(file)
        try {
          raw.exec(statement)
        } finally {
          raw.close()
        }
      },
    }
  },
  failInserts: (table) => ({
    install: [
      `create trigger fail_${table} before insert on ${table} begin select raise(abort, 'refused by the test'); end`,
    ],
    remove: [`drop trigger fail_${table}`],
  }),
}

webhookScenarios(sqlite)

async function outboxRows(file: string): Promise<number> {
  const raw = await rawSqlite(file)
  try {
    const [row] = raw.prepare('select count(*) as n from event_outbox').all([]) as { n: number }[]
    return Number(row?.n)
  } finally {
    raw.close()
  }
}

/** What `fileDeleted` carries for one of alice's files removed for `reason`. */
const deletedFile = (url: string, reason: string) => ({
  key: keyOf(url),
  url,
  owner: 'alice',
  reason,
})

const putDocument = (server: { url: string }, id: string, token: string, html: string) =>
  fetch(`${server.url}/documents/${id}`, {
    method: 'PUT',
    headers: { 'content-type': 'text/html', ...bearer(token) },
    body: html,
  })

async function sqliteDatabase(t: TestContext): Promise<Database & { file: string }> {
  const db = await sqlite.database(t)
  return { ...db, file: (db.index as { file: string }).file }
}

test('in-process handlers hear an upload and a delete after they commit, as the webhook hears them', async (t) => {
  const receiver = await startWebhookReceiver(t, SECRET)
  const db = await sqliteDatabase(t)
  const heard: UeditorEvent[] = []
  const server = await startNode(t, {
    dataDir: await tempDir(t, 'ue-hook-'),
    db,
    receiver,
    on: {
      fileStored: (e) => void heard.push(e),
      fileDeleted: async (e) => void heard.push(e),
    },
  })
  const stored = await upload(server)
  const url = stored.body.url as string
  const deleted = await fetch(`${server.url}/ueditor?action=deletefile`, {
    method: 'POST',
    headers: bearer(ALICE),
    body: new URLSearchParams({ url }),
  })
  assert.equal(((await deleted.json()) as { state: string }).state, 'SUCCESS')
  const deliveries = await receiver.waitFor(2)
  assert.deepEqual(
    heard.map((e) => ({ type: e.type, data: e.data })),
    [
      {
        type: 'fileStored',
        data: {
          key: keyOf(url),
          url,
          category: 'file',
          size: PDF.length,
          mime: 'application/pdf',
          owner: 'alice',
          originalName: 'notes.pdf',
        },
      },
      { type: 'fileDeleted', data: deletedFile(url, 'user') },
    ],
  )
  // The same events, ids and all, in the same order: one per subject at a time.
  assert.deepEqual(
    deliveries.map((d) => d.event),
    heard,
  )
  assert.ok(deliveries.every((d) => d.verified))
  // Delivered events leave the outbox.
  await eventually(async () => (await outboxRows(db.file)) === 0, {
    timeoutMs: 20_000,
    what: 'an empty outbox',
  })
})

test('a handler that throws or never settles is logged and counted, and never fails or holds the request', async (t) => {
  const logger = recordingLogger()
  let deletedHeard = 0
  const srv = await startTestServer(
    t,
    { auth: { tokens: [`alice:${ALICE}`] }, delete: { enabled: true } },
    {
      logger,
      on: {
        fileStored() {
          throw new Error('the host app broke')
        },
        fileDeleted() {
          deletedHeard++
          return new Promise<void>(() => {})
        },
      },
    },
  )
  const stored = await uploadFile(srv, bearer(ALICE))
  assert.equal(stored.body.state, 'SUCCESS')
  const deleted = await deleteFile(srv, bearer(ALICE), stored.body.url as string)
  assert.equal(deleted.body.state, 'SUCCESS')
  await eventually(
    () => deletedHeard === 1 && logger.lines.some((l) => l.includes('handler failed')),
    {
      timeoutMs: 10_000,
      intervalMs: 10,
      what: 'the deleted event heard and the failing handler logged',
    },
  )
  const failure = logger.lines.find((l) => l.includes('event handler failed')) as string
  assert.match(failure, /"level":"error"/)
  assert.match(failure, /"event":"fileStored"/)
  const metrics = await (await fetch(`${srv.url}/metrics`)).text()
  assert.match(metrics, /ueditor_event_handler_failures_total\{type="fileStored"\} 1/)
  // No webhook: nothing is kept for one.
  const { index } = srv.ue.config
  if (index.driver !== 'sqlite') throw new Error('a SQLite index was configured')
  assert.equal(await outboxRows(index.file), 0)
})

test('files reconcile --fix announces the rows it removes, and a serving node delivers the event', async (t) => {
  const receiver = await startWebhookReceiver(t, SECRET)
  const db = await sqliteDatabase(t)
  const dataDir = await tempDir(t, 'ue-hook-')
  const server = await startNode(t, { dataDir, db, receiver })
  const stored = await upload(server)
  const key = keyOf(stored.body.url as string)
  await receiver.waitFor(1)
  // The bytes vanish behind the server's back: the row is one without an object.
  const { storage } = server.ue.config
  if (storage.driver !== 'local') throw new Error('local storage was configured')
  await unlink(join(storage.root, key))
  const fixed = await cliFix(['files', 'reconcile'], { dataDir, db, receiver })
  assert.equal(fixed.code, 0, fixed.stderr)
  await lastAndOnlyDelivery(receiver, 2, deletedFile(stored.body.url as string, 'reconcile'))
})

test('saving and deleting a document through the documents API sends documentSaved and documentDeleted, in process and to the webhook', async (t) => {
  const receiver = await startWebhookReceiver(t, SECRET)
  const db = await sqliteDatabase(t)
  const heard: UeditorEvent[] = []
  const server = await startNode(t, {
    dataDir: await tempDir(t, 'ue-hook-'),
    db,
    receiver,
    config: { documents: { enabled: true } },
    on: {
      documentSaved: (e) => void heard.push(e),
      documentDeleted: (e) => void heard.push(e),
    },
  })
  const stored = await upload(server)
  const url = stored.body.url as string
  const article = `<p>Text<img src="${url}"><img src="https://elsewhere.example/cat.jpg"></p>`
  const saved = await putDocument(server, 'post-1', ALICE, article)
  assert.equal(saved.status, 200, await saved.clone().text())
  const answer = (await saved.json()) as { files: string[]; foreign: string[] }
  const deleted = await fetch(`${server.url}/documents/post-1`, {
    method: 'DELETE',
    headers: bearer(ALICE),
  })
  assert.equal(deleted.status, 200)
  const deliveries = await receiver.waitFor(3)
  const documentEvents = deliveries.map((d) => d.event).filter((e) => e.type !== 'fileStored')
  assert.deepEqual(
    documentEvents.map((e) => [e.type, e.data]),
    [
      [
        'documentSaved',
        {
          id: 'post-1',
          owner: 'alice',
          files: [url],
          foreign: ['https://elsewhere.example/cat.jpg'],
        },
      ],
      ['documentDeleted', { id: 'post-1', owner: 'alice' }],
    ],
  )
  assert.deepEqual(answer.files, [url])
  assert.deepEqual(documentEvents, heard)
  assert.ok(deliveries.every((d) => d.verified))
})

test('a document save refused inside its transaction sends no event', async (t) => {
  const receiver = await startWebhookReceiver(t, SECRET)
  const db = await sqliteDatabase(t)
  const heard: UeditorEvent[] = []
  const server = await startNode(t, {
    dataDir: await tempDir(t, 'ue-hook-'),
    db,
    receiver,
    config: { documents: { enabled: true } },
    on: { documentSaved: (e) => void heard.push(e) },
  })
  const put = (token: string, html: string) => putDocument(server, 'post-2', token, html)
  assert.equal((await put(ALICE, '<p>mine</p>')).status, 200)
  // Bob's save of alice's document fails in the transaction that would record its event.
  assert.equal((await put(BOB, '<p>not mine</p>')).status, 404)
  await receiver.waitFor(1)
  await pause(300)
  assert.equal(receiver.deliveries.length, 1)
  assert.equal(heard.length, 1)
  assert.equal(await outboxRows(db.file), 0)
})

test('files orphans --fix announces each file it removes as fileDeleted with reason orphan', async (t) => {
  const receiver = await startWebhookReceiver(t, SECRET)
  const db = await sqliteDatabase(t)
  const dataDir = await tempDir(t, 'ue-hook-')
  const server = await startNode(t, {
    dataDir,
    db,
    receiver,
    config: { documents: { enabled: true } },
  })
  const used = await upload(server, 'used.pdf')
  const orphan = await upload(server, 'orphan.pdf')
  const saved = await putDocument(
    server,
    'post-3',
    ALICE,
    `<p><a href="${used.body.url}">notes</a></p>`,
  )
  assert.equal(saved.status, 200)
  await receiver.waitFor(3)
  const fixed = await cliFix(
    ['files', 'orphans'],
    { dataDir, db, receiver },
    {
      UEDITOR_DOCUMENTS_ENABLED: 'true',
    },
  )
  assert.equal(fixed.code, 0, fixed.stderr + fixed.stdout)
  await lastAndOnlyDelivery(receiver, 4, deletedFile(orphan.body.url as string, 'orphan'))
})

test('the periodic orphan sweep announces each file it removes, in process and to the webhook', async (t) => {
  const receiver = await startWebhookReceiver(t, SECRET)
  const db = await sqliteDatabase(t)
  const heard: UeditorEvent[] = []
  const server = await startNode(t, {
    dataDir: await tempDir(t, 'ue-hook-'),
    db,
    receiver,
    config: { documents: { enabled: true, orphanGrace: '0', sweepInterval: '1s' } },
    on: { fileDeleted: (e) => void heard.push(e) },
  })
  const orphan = await upload(server, 'orphan.pdf')
  const [, removed] = await receiver.waitFor(2)
  assert.deepEqual(
    [removed?.event.type, removed?.event.data],
    ['fileDeleted', deletedFile(orphan.body.url as string, 'orphan')],
  )
  await eventually(async () => heard.length === 1, {
    timeoutMs: 20_000,
    what: 'the in-process handler',
  })
  assert.deepEqual(heard[0], removed?.event)
  assert.deepEqual(await listedUrls(server), [])
})

test('an upload undone after its row because the owner went past the quota meanwhile sends fileStored, then fileDeleted with reason quota', async (t) => {
  const receiver = await startWebhookReceiver(t, SECRET)
  const db = await sqliteDatabase(t)
  const server = await startNode(t, {
    dataDir: await tempDir(t, 'ue-hook-'),
    db,
    receiver,
    config: { limits: { quotaBytes: 10_000_000 } },
  })
  // Another node's upload of the same user lands between this upload's two quota checks.
  await db.exec(
    `create trigger other_node after insert on files when new.original_name = 'raced.pdf' begin
       insert into files (key, category, size, created_at, owner)
       values ('other/' || new.key, 'file', 20000000, new.created_at, new.owner);
     end`,
  )
  const raced = await upload(server, 'raced.pdf')
  assert.equal(raced.body.code, 'UE_QUOTA_EXCEEDED')
  const [stored, undone] = await receiver.waitFor(2)
  assert.equal(stored?.event.type, 'fileStored')
  assert.equal(undone?.event.type, 'fileDeleted')
  assert.deepEqual(undone?.event.data, {
    key: stored?.event.data.key,
    url: stored?.event.data.url,
    owner: 'alice',
    reason: 'quota',
  })
})

test('an event still failing past webhooks.maxAgeMs is given up, logged at error with the event, and counted', async (t) => {
  const receiver = await startWebhookReceiver(t, SECRET, 'fail')
  const db = await sqliteDatabase(t)
  const logger = recordingLogger()
  const server = await startNode(t, {
    dataDir: await tempDir(t, 'ue-hook-'),
    db,
    receiver,
    logger,
    config: { webhooks: { ...webhookConfig(receiver.url), maxAgeMs: 1_000 } },
  })
  const stored = await upload(server)
  await eventually(async () => logger.lines.some((l) => l.includes('webhook event given up')), {
    timeoutMs: 20_000,
    what: 'the event given up',
  })
  const line = logger.lines.find((l) => l.includes('webhook event given up')) as string
  assert.match(line, /"level":"error"/)
  assert.ok(line.includes(JSON.stringify(stored.body.url).slice(1, -1)), line)
  assert.match(line, /answered HTTP 500/)
  assert.equal(await outboxRows(db.file), 0)
  const metrics = await (await fetch(`${server.url}/metrics`)).text()
  assert.match(metrics, /ueditor_webhook_deliveries_total\{type="fileStored",outcome="gave_up"\} 1/)
  assert.ok(receiver.refused >= 2)
  await receiver.setMode('accept')
  await pause(300)
  assert.equal(receiver.deliveries.length, 0)
})

test('a webhook URL without a secret, or one that is not http(s), refuses to start with the reason', async () => {
  await assert.rejects(
    createUeditorServer({ env: { UEDITOR_WEBHOOK_URL: 'http://127.0.0.1:9/hook' } }),
    (e) => {
      assert.ok(isUeError(e))
      assert.equal(e.code, 'UE_CONFIG_INVALID')
      assert.match(e.message, /webhooks\.secret.*needs a secret.*UEDITOR_WEBHOOK_SECRET/s)
      return true
    },
  )
  assert.throws(
    () =>
      loadConfig({
        env: {},
        overrides: { webhooks: { url: 'file:///etc/passwd', secret: SECRET } },
      }),
    /webhooks\.url/,
  )
  assert.throws(
    () =>
      loadConfig({
        env: {},
        overrides: { webhooks: { url: 'https://h.example/x', secret: 'short' } },
      }),
    /webhooks\.secret.*at least 16/,
  )
  const ok = loadConfig({
    env: { UEDITOR_WEBHOOK_URL: 'https://h.example/x', UEDITOR_WEBHOOK_SECRET: SECRET },
  })
  assert.equal(ok.webhooks.url, 'https://h.example/x')
})

test('an on option naming no event, or not a function, refuses to start with the name', async (t) => {
  const dataDir = await tempDir(t, 'ue-on-')
  await assert.rejects(
    createUeditorServer({
      env: {},
      config: { logLevel: 'silent', dataDir },
      on: { filestored: () => {}, fileDeleted: 'log' } as never,
    }),
    (e) => {
      assert.ok(isUeError(e))
      assert.equal(e.code, 'UE_CONFIG_INVALID')
      assert.match(e.message, /on\.filestored: not an event \(fileStored, fileDeleted/)
      assert.match(e.message, /on\.fileDeleted: must be a function/)
      return true
    },
  )
  // Refused before anything was opened or written.
  assert.deepEqual(await readdir(dataDir), [])
})

test('the signature check in docs/events.md is the one the test receiver runs, and the exported one agrees', () => {
  const source = repoFile('packages/server/tests/helpers/webhook-receiver.ts')
  const snippet = /\/\/ --- verification snippet ---\n([\s\S]*?)\/\/ --- end/.exec(source)?.[1]
  assert.ok(snippet)
  const doc = repoFile('docs/events.md')
  assert.ok(doc.includes(snippet.trim()), 'docs/events.md shows the receiver’s verifySignature')
  const body = '{"id":"1","type":"fileStored"}'
  assert.equal(verifyWebhookSignature(SECRET, body, signatureOf(SECRET, body)), true)
  assert.equal(verifyWebhookSignature(SECRET, `${body} `, signatureOf(SECRET, body)), false)
  assert.equal(
    verifyWebhookSignature(SECRET, body, signatureOf('another-secret-0123456', body)),
    false,
  )
  assert.equal(verifyWebhookSignature(SECRET, body, undefined), false)
})

/** `ueditor-server <command> --fix --grace 0` on the node's data, with its webhook set. */
function cliFix(
  command: string[],
  node: { dataDir: string; db: { file: string }; receiver: WebhookReceiver },
  env: NodeJS.ProcessEnv = {},
) {
  return runCli([...command, '--fix', '--grace', '0'], {
    UEDITOR_DATA_DIR: node.dataDir,
    UEDITOR_SQLITE_FILE: node.db.file,
    ...env,
    UEDITOR_WEBHOOK_URL: node.receiver.url,
    UEDITOR_WEBHOOK_SECRET: SECRET,
  })
}

/** The `count`th delivery is a signed fileDeleted of `data`, and no other follows it. */
async function lastAndOnlyDelivery(
  receiver: WebhookReceiver,
  count: number,
  data: Record<string, unknown>,
) {
  const last = (await receiver.waitFor(count))[count - 1]
  assert.equal(last?.verified, true)
  assert.deepEqual([last?.event.type, last?.event.data], ['fileDeleted', data])
  await pause(200)
  assert.equal(receiver.deliveries.length, count)
}

function repoFile(path: string): string {
  return readFileSync(fileURLToPath(new URL(`../../../../../${path}`, import.meta.url)), 'utf8')
}
