import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { openMetadataStore } from '../../src/db/open.js'
import type { StorageKey } from '../../src/shared/types.js'
import { fileIndexContract } from '../contracts/file-index.contract.js'
import { materialRepositoryContract } from '../contracts/material-repo.contract.js'

const dir = await mkdtemp(join(tmpdir(), 'ue-db-'))
after(() => rm(dir, { recursive: true, force: true }))

let n = 0
// A directory that does not exist yet: opening must create it.
fileIndexContract('sqlite', () =>
  openMetadataStore({ driver: 'sqlite', file: join(dir, `store-${++n}`, 'index.db') }),
)
materialRepositoryContract('sqlite', () =>
  openMetadataStore({ driver: 'sqlite', file: join(dir, `store-${++n}`, 'index.db') }),
)

describe('SQLite metadata store', () => {
  test('keeps entries in the database file and its WAL across close and reopen', async () => {
    const file = join(dir, 'persist', 'index.db')
    const key = '2025/01/02/kept.png' as StorageKey
    const first = await openMetadataStore({ driver: 'sqlite', file })
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

    const raw = new Database(file, { readonly: true })
    try {
      assert.equal(raw.pragma('journal_mode', { simple: true }), 'wal')
    } finally {
      raw.close()
    }

    const second = await openMetadataStore({ driver: 'sqlite', file })
    try {
      await second.migrate()
      assert.deepEqual(await second.files.get(key), added)
    } finally {
      await second.close()
    }
  })

  test('opens an in-memory database when the file is :memory:', async () => {
    const store = await openMetadataStore({ driver: 'sqlite', file: ':memory:' })
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
