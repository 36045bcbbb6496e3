import assert from 'node:assert/strict'
import pg from 'pg'
import { skipOrFail, startPostgresLane } from '../helpers/postgres.js'
import { tempDir } from '../helpers/temp-dir.js'
import { after, test } from '../helpers/test.js'
import { pause, startWebhookReceiver } from '../helpers/webhook-receiver.js'
import {
  type Engine,
  keyOf,
  SECRET,
  startNode,
  upload,
  webhookScenarios,
} from './webhook-scenarios.js'

// One cluster for this file; one database per test.
const lane = await startPostgresLane()

if ('unavailable' in lane) {
  test('delivers webhooks from a PostgreSQL index', (t) => skipOrFail(t, lane.unavailable))
} else {
  const { cluster } = lane
  after(() => cluster.stop())

  const postgres: Engine = {
    name: 'PostgreSQL',
    async database() {
      const url = await cluster.createDatabase()
      return {
        index: { driver: 'postgres', url, poolSize: 4 },
        async exec(statement) {
          const client = new pg.Client({ connectionString: url })
          await client.connect()
          try {
            await client.query(statement)
          } finally {
            await client.end()
          }
        },
      }
    },
    failInserts: (table) => ({
      install: [
        `create or replace function fail_insert() returns trigger language plpgsql as $$ begin raise exception 'refused by the test'; end $$`,
        `create trigger fail_${table} before insert on ${table} for each row execute function fail_insert()`,
      ],
      remove: [`drop trigger fail_${table} on ${table}`],
    }),
  }

  webhookScenarios(postgres)

  test('two servers on one PostgreSQL database deliver each event exactly once', async (t) => {
    const receiver = await startWebhookReceiver(t, SECRET)
    const db = await postgres.database(t)
    const dataDir = await tempDir(t, 'ue-hook-')
    const nodes = [
      await startNode(t, { dataDir, db, receiver }),
      await startNode(t, { dataDir, db, receiver }),
    ]
    const stored = await Promise.all(
      Array.from({ length: 24 }, (_, i) => upload(nodes[i % 2] as (typeof nodes)[0], `n${i}.pdf`)),
    )
    assert.ok(stored.every((s) => s.body.state === 'SUCCESS'))
    await receiver.waitFor(24)
    // Many polls of both nodes later, nothing more arrives.
    await pause(500)
    const events = receiver.deliveries.map((d) => d.event)
    assert.equal(events.length, 24)
    assert.equal(new Set(events.map((e) => e.id)).size, 24)
    assert.deepEqual(
      events.map((e) => e.data.key).sort(),
      stored.map((s) => keyOf(s.body.url as string)).sort(),
    )
    assert.ok(receiver.deliveries.every((d) => d.verified))
  })
}
