import assert from 'node:assert/strict'
import { readlinkSync } from 'node:fs'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CompiledQuery, Kysely, sql } from '#kysely'
import { openMetadataStore } from '../../src/db/open.js'
import { SnapshotSqliteDialect } from '../../src/db/sqlite-snapshots.js'
import { rawSqlite } from '../helpers/sqlite.js'
import { test } from '../helpers/test.js'

interface Schema {
  t: { n: number }
}

/** A real SQLite file behind the dialect the server uses, with one table of numbers. */
async function snapshotDb(t: { after(fn: () => Promise<void>): void }) {
  const dir = await mkdtemp(join(tmpdir(), 'ue-snap-'))
  const dialect = new SnapshotSqliteDialect(await rawSqlite(join(dir, 'index.db')))
  const db = new Kysely<Schema>({ dialect })
  t.after(async () => {
    await db.destroy()
    await rm(dir, { recursive: true, force: true })
  })
  await sql`create table t (n integer)`.execute(db)
  return { db, snapshots: dialect.snapshots }
}

const numbers = CompiledQuery.raw('select n from t order by n') as CompiledQuery<{ n: number }>

test('a snapshot read while a Kysely transaction holds the connection waits for its commit', async (t) => {
  const { db, snapshots } = await snapshotDb(t)
  let commit = () => {}
  const held = new Promise<void>((resolve) => {
    commit = resolve
  })
  const writing = db.transaction().execute(async (tx) => {
    await tx.insertInto('t').values({ n: 1 }).execute()
    await held
    await tx.insertInto('t').values({ n: 2 }).execute()
  })
  // Let the transaction take the connection and insert its first row.
  await new Promise((resolve) => setImmediate(resolve))
  let read: number[] | undefined
  const reading = snapshots
    .read((run) => run(numbers).map((r) => r.n))
    .then((rows) => {
      read = rows
    })
  await new Promise((resolve) => setImmediate(resolve))
  assert.equal(read, undefined, 'the snapshot must not run inside the open transaction')
  commit()
  await Promise.all([writing, reading])
  assert.deepEqual(read, [1, 2])
})

test('a snapshot whose work throws is rolled back and leaves the connection usable', async (t) => {
  const { db, snapshots } = await snapshotDb(t)
  await assert.rejects(
    snapshots.read((run) => {
      run(CompiledQuery.raw('insert into t (n) values (7)'))
      throw new Error('refused half-way')
    }),
    /refused half-way/,
  )
  await assert.rejects(snapshots.read((run) => run(CompiledQuery.raw('select * from missing'))))
  await db.insertInto('t').values({ n: 3 }).execute()
  assert.deepEqual(await snapshots.read((run) => run(numbers).map((r) => r.n)), [3])
})

test('a snapshot does not overtake a query already waiting for the connection', async (t) => {
  const { db, snapshots } = await snapshotDb(t)
  let release = () => {}
  const first = db.transaction().execute(async (tx) => {
    await tx.insertInto('t').values({ n: 1 }).execute()
    await new Promise<void>((resolve) => {
      release = resolve
    })
  })
  await new Promise((resolve) => setImmediate(resolve))
  const second = db.insertInto('t').values({ n: 2 }).execute()
  // Let the insert reach the connection's queue first.
  await new Promise((resolve) => setImmediate(resolve))
  const third = snapshots.read((run) => run(numbers).map((r) => r.n))
  release()
  const [, , seen] = await Promise.all([first, second, third])
  assert.deepEqual(seen, [1, 2])
})

test('a store that only ever read through snapshots lets go of its database file when closed', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ue-snap-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'index.db')
  const store = await openMetadataStore({ driver: 'sqlite', file })
  await store.materials.categories().catch(() => [])
  await store.close()
  const open = (await readdir('/proc/self/fd')).map((fd) => {
    try {
      return readlinkSync(join('/proc/self/fd', fd))
    } catch {
      return ''
    }
  })
  assert.deepEqual(
    open.filter((target) => target.startsWith(file)),
    [],
  )
})
