import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openMetadataStore, resolveSqliteEngine } from '../../src/db/open.js'
import { builtinSqliteAvailable } from '../../src/db/sqlite-builtin.js'
import type { MetadataStore } from '../../src/db/types.js'
import { isUeError } from '../../src/shared/errors.js'
import type { StorageKey } from '../../src/shared/types.js'
import { aiUsageContract } from '../contracts/ai-usage.contract.js'
import { documentEventsContract } from '../contracts/document-events.contract.js'
import { documentRepositoryContract } from '../contracts/document-repo.contract.js'
import { fileDayCountsContract } from '../contracts/file-day-counts.contract.js'
import { fileIndexContract } from '../contracts/file-index.contract.js'
import { materialRepositoryContract } from '../contracts/material-repo.contract.js'
import { outboxContract } from '../contracts/outbox.contract.js'
import { uploadLedgerContract } from '../contracts/upload-ledger.contract.js'
import { skipOrFail } from '../helpers/postgres.js'
import {
  ENGINES,
  type Engine,
  engineMissing,
  engineNotApplicable,
  rawSqlite,
} from '../helpers/sqlite.js'
import { after, describe, test } from '../helpers/test.js'

const dir = await mkdtemp(join(tmpdir(), 'ue-db-'))
after(() => rm(dir, { recursive: true, force: true }))

let n = 0

// An engine this Node line cannot run (node:sqlite before 22.13, better-sqlite3 from 24) has no
// tests here: the Node matrix (.ci/node-matrix.sh, docs/node-versions.md) runs each engine's
// suite on the lines that have it. A missing better-sqlite3 build can be fixed, so it is a
// failure in CI.
const applicable = ENGINES.filter((engine) => engineNotApplicable(engine) === null)

for (const engine of applicable) {
  const missing = await engineMissing(engine)
  if (missing !== null) {
    test(`runs the metadata store contracts on SQLite through ${engine}`, (t) =>
      skipOrFail(t, missing))
    continue
  }
  // A directory that does not exist yet: opening must create it.
  const open = () =>
    openMetadataStore({ driver: 'sqlite', engine, file: join(dir, `store-${++n}`, 'index.db') })
  const openNodes = async () => {
    const file = join(dir, `store-${++n}`, 'index.db')
    const a = await openMetadataStore({ driver: 'sqlite', engine, file })
    const b = await openMetadataStore({ driver: 'sqlite', engine, file })
    return [a, b] as [MetadataStore, MetadataStore]
  }
  fileIndexContract(`sqlite (${engine})`, open, openNodes)
  fileDayCountsContract(`sqlite (${engine})`, async () => {
    const file = join(dir, `store-${++n}`, 'index.db')
    const store = await openMetadataStore({ driver: 'sqlite', engine, file })
    const raw = await rawSqlite(file, engine)
    return {
      store,
      all: async (sql) =>
        (raw.prepare(sql).all([]) as Record<string, unknown>[]).map((r) => ({ ...r })),
      exec: async (sql) => void raw.exec(sql),
      close: async () => {
        raw.close()
        await store.close()
      },
    }
  })
  materialRepositoryContract(`sqlite (${engine})`, open)
  aiUsageContract(`sqlite (${engine})`, openNodes)
  outboxContract(`sqlite (${engine})`, openNodes)
  documentEventsContract(`sqlite (${engine})`, open)
  // Two connections of one process to one SQLite file would block each other's thread (the
  // drivers are synchronous); nodes on SQLite are processes, which SQLite's lock serialises
  // just as one connection serialises these.
  documentRepositoryContract(`sqlite (${engine})`, open, async () => {
    const store = await open()
    return [store, store]
  })
  uploadLedgerContract(`sqlite (${engine})`, openNodes)
  storeTests(engine)
}

function storeTests(engine: Engine): void {
  describe(`SQLite metadata store through ${engine}`, () => {
    test('keeps entries in the database file and its WAL across close and reopen', async () => {
      const file = join(dir, `persist-${engine.replace(':', '-')}`, 'index.db')
      const key = '2025/01/02/kept.png' as StorageKey
      const first = await openMetadataStore({ driver: 'sqlite', engine, file })
      await first.migrate()
      const added = await first.files.add({
        key,
        category: 'image',
        originalName: '保存.png',
        ext: '.png',
        size: 42,
        mime: 'image/png',
        sha256: 'a'.repeat(64),
      })
      assert.ok(existsSync(`${file}-wal`), 'writes go through a write-ahead log')
      await first.close()

      const raw = await rawSqlite(file, engine)
      try {
        assert.deepEqual(
          { ...(raw.prepare('PRAGMA journal_mode').all([])[0] as object) },
          { journal_mode: 'wal' },
        )
      } finally {
        raw.close()
      }

      const second = await openMetadataStore({ driver: 'sqlite', engine, file })
      try {
        await second.migrate()
        assert.deepEqual(await second.files.get(key), added)
      } finally {
        await second.close()
      }
    })

    test('opens an in-memory database when the file is :memory:', async () => {
      const store = await openMetadataStore({ driver: 'sqlite', engine, file: ':memory:' })
      try {
        await store.migrate()
        assert.equal(store.dialect, 'sqlite')
        assert.deepEqual(await store.files.list({ categories: ['image'], start: 0, size: 5 }), {
          items: [],
          total: 0,
        })
      } finally {
        await store.close()
      }
    })
  })
}

if (applicable.length === ENGINES.length)
  test('a file written by one SQLite engine is read by the other', async (t) => {
    for (const engine of ENGINES) {
      const missing = await engineMissing(engine)
      if (missing !== null) return skipOrFail(t, missing)
    }
    const file = join(dir, 'shared', 'index.db')
    const key = '2025/01/03/both.png' as StorageKey
    const writer = await openMetadataStore({ driver: 'sqlite', engine: 'better-sqlite3', file })
    await writer.migrate()
    const added = await writer.files.add({
      key,
      category: 'image',
      originalName: 'both.png',
      ext: '.png',
      size: 7,
      mime: 'image/png',
      sha256: 'b'.repeat(64),
    })
    await writer.close()
    const reader = await openMetadataStore({ driver: 'sqlite', engine: 'node:sqlite', file })
    try {
      assert.deepEqual(await reader.migrate(), [])
      assert.deepEqual(await reader.files.get(key), added)
    } finally {
      await reader.close()
    }
  })

test('the default engine is node:sqlite where Node has it, better-sqlite3 before Node 22.13', () => {
  assert.equal(
    resolveSqliteEngine('auto'),
    builtinSqliteAvailable() ? 'node:sqlite' : 'better-sqlite3',
  )
  assert.equal(builtinSqliteAvailable('20.19.0'), false)
  assert.equal(builtinSqliteAvailable('22.12.0'), false)
  assert.equal(builtinSqliteAvailable('22.13.0'), true)
  assert.equal(builtinSqliteAvailable('23.3.0'), false)
  assert.equal(builtinSqliteAvailable('23.4.0'), true)
  assert.equal(builtinSqliteAvailable('24.0.0'), true)
})

if (!builtinSqliteAvailable())
  test('asking for node:sqlite on a Node without it fails with UE_INDEX_FAILED naming the version', async () => {
    await assert.rejects(
      openMetadataStore({ driver: 'sqlite', engine: 'node:sqlite', file: ':memory:' }),
      (e) => isUeError(e) && e.code === 'UE_INDEX_FAILED' && /Node 22\.13 or later/.test(e.message),
    )
  })
