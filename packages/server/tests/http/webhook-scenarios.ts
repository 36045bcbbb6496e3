import assert from 'node:assert/strict'
import type { ServerConfigInput } from '../../src/config/schema.js'
import type { UeditorEvent } from '../../src/events/types.js'
import type { UeditorOptions } from '../../src/server.js'
import { type RunningServer, startServer } from '../../src/standalone/serve.js'
import { ALICE, bearer, TOKENS } from '../helpers/auth.js'
import { eventually } from '../helpers/eventually.js'
import { PDF } from '../helpers/fixtures.js'
import { multipartBody } from '../helpers/multipart.js'
import { tempDir } from '../helpers/temp-dir.js'
import { type TestContext, test } from '../helpers/test.js'
import { pause, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js'

export const SECRET = 'webhook-secret-0123456789abcdef'

/** Where the servers of one scenario keep their index, and raw SQL on it. */
export interface Database {
  index: ServerConfigInput['index']
  /** Runs one statement on the database, outside the server. */
  exec(statement: string): Promise<void>
}

export interface Engine {
  name: string
  /** A fresh, empty database. */
  database(t: TestContext): Promise<Database>
  /** SQL that makes every insert into `table` fail, and SQL that undoes it. */
  failInserts(table: string): { install: string[]; remove: string[] }
}

/** Short back-off and polling, so an outage of a second is many attempts. */
export function webhookConfig(url: string): ServerConfigInput['webhooks'] {
  return { url, secret: SECRET, retryBaseMs: 20, retryMaxMs: 100, pollMs: 20, timeoutMs: 2_000 }
}

/** A standalone server on 127.0.0.1:0 over `dataDir` and `db`, closed after the test. */
export async function startNode(
  t: TestContext,
  o: {
    dataDir: string
    db: Database
    receiver: WebhookReceiver
    on?: UeditorOptions['on']
    logger?: UeditorOptions['logger']
    /** More config, over the scenario's own. */
    config?: ServerConfigInput
  },
): Promise<RunningServer> {
  const server = await startServer({
    env: {},
    ...(o.on ? { on: o.on } : {}),
    ...(o.logger ? { logger: o.logger } : {}),
    config: {
      logLevel: 'silent',
      dataDir: o.dataDir,
      index: o.db.index,
      http: { port: 0, host: '127.0.0.1', shutdownGraceMs: 2_000 },
      auth: { tokens: TOKENS, adminUsers: ['root'] },
      delete: { enabled: true },
      webhooks: webhookConfig(o.receiver.url),
      ...o.config,
    },
  })
  let closed = false
  const close = server.close.bind(server)
  const node = Object.assign(server, {
    close: async () => {
      if (closed) return
      closed = true
      await close()
    },
  })
  t.after(() => node.close())
  return node
}

/** Uploads the PDF fixture as alice; the editor's answer. */
export async function upload(
  server: RunningServer,
  name = 'notes.pdf',
): Promise<{ status: number; body: { state: string; url?: string; code?: string } }> {
  const { body, contentType } = multipartBody([
    { name: 'file', value: PDF, filename: name, contentType: 'application/pdf' },
  ])
  const res = await fetch(`${server.url}/ueditor?action=file`, {
    method: 'POST',
    headers: { 'content-type': contentType, ...bearer(ALICE) },
    body,
  })
  return { status: res.status, body: (await res.json()) as { state: string; url?: string } }
}

export async function listedUrls(server: RunningServer): Promise<string[]> {
  const res = await fetch(`${server.url}/ueditor?action=listFile&start=0&size=100`, {
    headers: bearer(ALICE),
  })
  const body = (await res.json()) as { list?: { url: string }[] }
  return (body.list ?? []).map((e) => e.url)
}

export function keyOf(url: string): string {
  return url.replace(/^\/uploads\//, '')
}

/** The scenarios every database must pass. */
export function webhookScenarios(engine: Engine): void {
  test(`a stored file's event reaches the webhook once, signed as the docs verify it (${engine.name})`, async (t) => {
    const receiver = await startWebhookReceiver(t, SECRET)
    const db = await engine.database(t)
    const server = await startNode(t, { dataDir: await tempDir(t, 'ue-hook-'), db, receiver })
    const stored = await upload(server)
    assert.equal(stored.body.state, 'SUCCESS')
    const [delivery] = await receiver.waitFor(1)
    assert.ok(delivery)
    assert.equal(delivery.verified, true)
    const { event, headers } = delivery
    assert.equal(headers['x-ueditor-event'], 'fileStored')
    assert.equal(headers['content-type'], 'application/json')
    assert.match(String(headers['x-ueditor-delivery']), /^[0-9a-f-]{36}$/)
    assert.match(event.id, /^[0-9a-f-]{36}$/)
    assert.equal(event.type, 'fileStored')
    assert.ok(Math.abs(Date.parse(event.timestamp) - Date.now()) < 60_000, event.timestamp)
    assert.deepEqual(event.data, {
      key: keyOf(stored.body.url as string),
      url: stored.body.url,
      category: 'file',
      size: PDF.length,
      mime: 'application/pdf',
      owner: 'alice',
      originalName: 'notes.pdf',
    })
    // Long enough for many more polls: it is never sent again.
    await pause(300)
    assert.equal(receiver.deliveries.length, 1)
  })

  test(`an event survives a receiver that is down, then failing, and a server restart in between, and arrives exactly once (${engine.name})`, async (t) => {
    const receiver = await startWebhookReceiver(t, SECRET, 'down')
    const db = await engine.database(t)
    const dataDir = await tempDir(t, 'ue-hook-')
    const first = await startNode(t, { dataDir, db, receiver })
    const stored = await upload(first)
    assert.equal(stored.body.state, 'SUCCESS')
    await eventually(async () => (await failedAttempts(first)) >= 3, {
      timeoutMs: 20_000,
      what: 'three refused connections',
    })
    await first.close()

    await receiver.setMode('fail')
    const second = await startNode(t, { dataDir, db, receiver })
    await eventually(async () => receiver.refused >= 3, {
      timeoutMs: 20_000,
      what: 'three answers of 500',
    })
    assert.equal(receiver.deliveries.length, 0)
    await receiver.setMode('accept')
    const [delivery] = await receiver.waitFor(1)
    await pause(300)
    assert.equal(receiver.deliveries.length, 1)
    assert.equal(delivery?.verified, true)
    assert.equal(delivery?.event.data.url, stored.body.url)
    assert.ok((await failedAttempts(second)) >= 3)
  })

  test(`closing a server cuts off its attempt in flight and a later start delivers the event once (${engine.name})`, async (t) => {
    const receiver = await startWebhookReceiver(t, SECRET, 'hang')
    const db = await engine.database(t)
    const dataDir = await tempDir(t, 'ue-hook-')
    const first = await startNode(t, { dataDir, db, receiver })
    assert.equal((await upload(first)).body.state, 'SUCCESS')
    await eventually(async () => receiver.held.count === 1, {
      timeoutMs: 20_000,
      what: 'an attempt held by the receiver',
    })
    await first.close()
    // The attempt did not outlive the server: its connection is gone.
    await eventually(async () => receiver.held.cutOff === 1, {
      timeoutMs: 20_000,
      what: 'the held attempt cut off',
    })

    await receiver.setMode('accept')
    await startNode(t, { dataDir, db, receiver })
    await receiver.waitFor(1)
    await pause(300)
    assert.equal(receiver.deliveries.length, 1)
    assert.equal(receiver.held.count, 1)
  })

  test(`a change rolled back inside its transaction sends no event, in process or to the webhook (${engine.name})`, async (t) => {
    const receiver = await startWebhookReceiver(t, SECRET)
    const db = await engine.database(t)
    const heard: UeditorEvent[] = []
    const server = await startNode(t, {
      dataDir: await tempDir(t, 'ue-hook-'),
      db,
      receiver,
      on: { fileStored: (e) => void heard.push(e) },
    })
    // The file's row goes in, then the event's row fails: the two roll back together.
    const failing = engine.failInserts('event_outbox')
    for (const statement of failing.install) await db.exec(statement)
    const refused = await upload(server, 'refused.pdf')
    assert.notEqual(refused.body.state, 'SUCCESS')
    assert.equal(refused.body.code, 'UE_INDEX_FAILED')
    assert.deepEqual(await listedUrls(server), [])

    for (const statement of failing.remove) await db.exec(statement)
    const stored = await upload(server, 'kept.pdf')
    assert.equal(stored.body.state, 'SUCCESS')
    const [delivery] = await receiver.waitFor(1)
    await pause(300)
    assert.equal(receiver.deliveries.length, 1)
    assert.equal(delivery?.event.data.originalName, 'kept.pdf')
    assert.deepEqual(
      heard.map((e) => e.type === 'fileStored' && e.data.originalName),
      ['kept.pdf'],
    )
  })
}

/** `ueditor_webhook_deliveries_total{outcome="failed"}` of one node, summed over types. */
export async function failedAttempts(server: RunningServer): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text()
  return text
    .split('\n')
    .filter((l) => l.startsWith('ueditor_webhook_deliveries_total{') && /outcome="failed"/.test(l))
    .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0)
}
