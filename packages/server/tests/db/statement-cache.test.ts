import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SqliteDatabase } from '#kysely'
import { withStatementCache } from '../../src/db/statement-cache.js'
import { rawSqlite } from '../helpers/sqlite.js'
import { test } from '../helpers/test.js'

/** A real SQLite database (the engine this Node uses) that counts how often SQL is prepared. */
async function countingDatabase(t: { after(fn: () => Promise<void>): void }) {
  const dir = await mkdtemp(join(tmpdir(), 'ue-stmt-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const db = await rawSqlite(join(dir, 'index.db'))
  db.exec('CREATE TABLE t (n INTEGER)')
  let prepared = 0
  const counted: SqliteDatabase = {
    close: () => db.close(),
    prepare: (sql) => {
      prepared++
      return db.prepare(sql)
    },
  }
  return { cached: withStatementCache(counted), prepared: () => prepared }
}

test('the same SQL text is prepared once and its statement runs again', async (t) => {
  const { cached, prepared } = await countingDatabase(t)
  for (let n = 0; n < 5; n++) cached.prepare('INSERT INTO t (n) VALUES (?)').run([n])
  const rows = cached.prepare('SELECT n FROM t ORDER BY n').all([]) as { n: number }[]
  assert.deepEqual(
    rows.map((r) => r.n),
    [0, 1, 2, 3, 4],
  )
  assert.equal(prepared(), 2)
  cached.close()
})

test('past its bound the least recently used statement is dropped and prepared again', async (t) => {
  const { cached, prepared } = await countingDatabase(t)
  const query = (n: number) => cached.prepare(`SELECT ${n} AS n`).all([])
  query(0)
  for (let n = 1; n <= 300; n++) {
    query(n)
    query(0) // kept recent, so never dropped
  }
  assert.equal(prepared(), 301)
  query(1) // long dropped
  assert.equal(prepared(), 302)
  assert.deepEqual(
    query(300).map((r) => ({ ...(r as object) })),
    [{ n: 300 }],
  )
  assert.equal(prepared(), 302)
  cached.close()
})
