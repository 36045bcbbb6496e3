import assert from 'node:assert/strict'
import { join } from 'node:path'
import pg from 'pg'
import { LATEST_MIGRATION } from '../../src/db/migrations.js'
import { type IndexConfig, openMetadataStore } from '../../src/db/open.js'
import { isUeError } from '../../src/shared/errors.js'
import { startServer } from '../../src/standalone/serve.js'
import { runCli } from '../helpers/cli.js'
import { skipOrFail, startPostgresLane } from '../helpers/postgres.js'
import { rawSqlite } from '../helpers/sqlite.js'
import { tempDir } from '../helpers/temp-dir.js'
import { after, type TestContext, test } from '../helpers/test.js'

/** A migration this release does not have, as a newer release would leave its row. */
const NEWER = '0099_from_a_newer_release'
const ROW = `insert into kysely_migration (name, timestamp) values ('${NEWER}', '2027-03-01T00:00:00.000Z')`

const REFUSAL = new RegExp(
  `UE_INDEX_NEWER: the index was migrated by a newer release of ueditor-server: it has run migration ${NEWER}, which this release \\(up to ${LATEST_MIGRATION}\\) does not have\\. Upgrade ueditor-server`,
)

/** An index of this release's schema, then the newer release's row written into it. */
async function migratedByNewer(index: IndexConfig, write: (sql: string) => Promise<void>) {
  const store = await openMetadataStore(index)
  try {
    await store.migrate()
  } finally {
    await store.close()
  }
  await write(ROW)
}

/**
 * The start (embedded and the binary), doctor and a maintenance command each refuse the index
 * with UE_INDEX_NEWER naming the newer migration, and leave it as it was.
 */
async function refusedEverywhere(
  t: TestContext,
  index: IndexConfig,
  env: Record<string, string>,
  names: () => Promise<string[]>,
) {
  const dir = await tempDir(t, 'ueditor-newer-')
  const before = await names()
  await assert.rejects(
    startServer({
      env: {},
      config: { logLevel: 'silent', dataDir: join(dir, 'data'), http: { port: 0 }, index },
    }),
    (e: unknown) => {
      assert.ok(isUeError(e) && e.code === 'UE_INDEX_NEWER', String(e))
      assert.match(e.message, REFUSAL)
      return true
    },
  )

  const cliEnv = { UEDITOR_DATA_DIR: join(dir, 'data'), PORT: '0', ...env }
  const serve = await runCli([], cliEnv, dir)
  assert.equal(serve.code, 1, serve.stderr)
  assert.equal(serve.stdout, '')
  assert.match(serve.stderr, /^ueditor-server failed to start: /)
  assert.match(serve.stderr, REFUSAL)

  const doctor = await runCli(['doctor'], cliEnv, dir)
  assert.equal(doctor.code, 1, doctor.stdout)
  const line = doctor.stdout.split('\n').findIndex((l) => l.startsWith('fail  database: '))
  assert.ok(line >= 0, doctor.stdout)
  const [failure, fix] = doctor.stdout.split('\n').slice(line, line + 2)
  assert.match(failure as string, REFUSAL)
  assert.match(fix as string, /^ {6}fix: upgrade ueditor-server to the release that migrated/)

  const reconcile = await runCli(['files', 'reconcile', '--quiet'], cliEnv, dir)
  assert.equal(reconcile.code, 1)
  assert.match(reconcile.stderr, REFUSAL)

  assert.deepEqual(await names(), before, 'the index is left as it was')
  assert.ok(before.includes(NEWER))
}

test('a server on a SQLite index a newer release migrated refuses it with UE_INDEX_NEWER naming the migration, as do doctor and the maintenance commands', async (t) => {
  const dir = await tempDir(t, 'ueditor-newer-sqlite-')
  const file = join(dir, 'ueditor.db')
  const index: IndexConfig = { driver: 'sqlite', file }
  const sqlite = async <T>(use: (db: Awaited<ReturnType<typeof rawSqlite>>) => T) => {
    const db = await rawSqlite(file)
    try {
      return use(db)
    } finally {
      db.close()
    }
  }
  await migratedByNewer(index, (statement) => sqlite((db) => db.exec(statement)))
  await refusedEverywhere(t, index, { UEDITOR_SQLITE_FILE: file }, () =>
    sqlite((db) =>
      (
        db.prepare('select name from kysely_migration order by name').all([]) as { name: string }[]
      ).map((r) => r.name),
    ),
  )
})

const lane = await startPostgresLane()
if ('cluster' in lane) after(() => lane.cluster.stop())

test('a server on a PostgreSQL index a newer release migrated refuses it with UE_INDEX_NEWER naming the migration, as do doctor and the maintenance commands', async (t) => {
  if ('unavailable' in lane) return skipOrFail(t, lane.unavailable)
  const url = await lane.cluster.createDatabase()
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  t.after(() => client.end())
  const index: IndexConfig = { driver: 'postgres', url, poolSize: 2 }
  await migratedByNewer(index, async (statement) => void (await client.query(statement)))
  await refusedEverywhere(t, index, { UEDITOR_DATABASE_URL: url }, async () =>
    (await client.query('select name from kysely_migration order by name')).rows.map(
      (r: { name: string }) => r.name,
    ),
  )
})
