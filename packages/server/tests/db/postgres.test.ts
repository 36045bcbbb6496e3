import assert from 'node:assert/strict'
import pg from 'pg'
import { CamelCasePlugin, Kysely, PostgresDialect, sql } from '#kysely'
import { createFileIndex } from '../../src/db/file-index.js'
import { createMaterialRepository } from '../../src/db/material-repo.js'
import { openMetadataStore } from '../../src/db/open.js'
import { postgresDialect } from '../../src/db/open-postgres.js'
import type { DbSchema } from '../../src/db/schema.js'
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
import { eventually } from '../helpers/eventually.js'
import { blob, png } from '../helpers/fixtures.js'
import { ADMIN_TOKEN, adminCreate, materialsClient } from '../helpers/materials.js'
import { skipOrFail, startPostgresLane } from '../helpers/postgres.js'
import { startTestServer } from '../helpers/start-server.js'
import { after, describe, type TestContext, test } from '../helpers/test.js'

// One cluster for this file (node:test gives each file its own process); one database per store.
const lane = await startPostgresLane()

if ('unavailable' in lane) {
  test('runs the metadata store contracts against a real PostgreSQL cluster', (t) =>
    skipOrFail(t, lane.unavailable))
} else {
  const { cluster } = lane
  after(() => cluster.stop())
  const open = async () =>
    openMetadataStore({ driver: 'postgres', url: await cluster.createDatabase(), poolSize: 4 })

  const openNodes = async () => {
    const url = await cluster.createDatabase()
    const a = await openMetadataStore({ driver: 'postgres', url, poolSize: 4 })
    const b = await openMetadataStore({ driver: 'postgres', url, poolSize: 4 })
    return [a, b] as [MetadataStore, MetadataStore]
  }

  /** Two stores on a fresh database, a client watching its sessions, and one tracked file. */
  const raceOnOneFile = async (t: TestContext, name: string) => {
    const url = await cluster.createDatabase()
    const saver = await openMetadataStore({ driver: 'postgres', url, poolSize: 2 })
    const sweeper = await openMetadataStore({ driver: 'postgres', url, poolSize: 2 })
    const watcher = new pg.Client({ connectionString: url })
    await watcher.connect()
    t.after(async () => {
      await watcher.end()
      await saver.close()
      await sweeper.close()
    })
    await saver.migrate()
    await saver.documents.startTracking()
    const file = await saver.files.add({
      key: `2026/01/01/${name}` as StorageKey,
      category: 'image',
      originalName: name,
      ext: '.png',
      size: 10,
      mime: 'image/png',
      sha256: 'd'.repeat(64),
      createdAt: 1_000,
    })
    const untilOneWaitsOnALock = () =>
      eventually(
        async () => {
          const { rows } = await watcher.query(
            "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
          )
          return rows[0].n > 0
        },
        { timeoutMs: 10_000, intervalMs: 20, what: 'a session waiting on a lock' },
      )
    return { saver, sweeper, file, untilOneWaitsOnALock }
  }
  fileIndexContract('postgres', open, openNodes)
  fileDayCountsContract('postgres', async () => {
    const url = await cluster.createDatabase()
    const store = await openMetadataStore({ driver: 'postgres', url, poolSize: 2 })
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    return {
      store,
      all: async (sql) => (await client.query(sql)).rows,
      exec: async (sql) => void (await client.query(sql)),
      close: async () => {
        await client.end()
        await store.close()
      },
    }
  })
  materialRepositoryContract('postgres', open)
  aiUsageContract('postgres', openNodes)
  outboxContract('postgres', openNodes)
  documentEventsContract('postgres', open)
  documentRepositoryContract('postgres', open, openNodes)
  uploadLedgerContract('postgres', openNodes)

  describe('PostgreSQL metadata store', () => {
    test('reports the postgres dialect and keeps entries across close and reopen', async () => {
      const url = await cluster.createDatabase()
      const first = await openMetadataStore({ driver: 'postgres', url, poolSize: 2 })
      assert.equal(first.dialect, 'postgres')
      assert.deepEqual(await first.migrate(), [
        '0001_files',
        '0002_materials',
        '0003_file_owner',
        '0004_files_key_bytes',
        '0005_file_counts',
        '0006_material_search',
        '0007_ai_usage',
        '0008_documents',
        '0009_event_outbox',
        '0010_uploads',
        '0011_file_day_counts',
        '0012_rate_limits',
      ])
      const added = await first.files.add({
        key: '2025/01/02/kept.png' as never,
        category: 'image',
        originalName: '保存.png',
        ext: '.png',
        size: 5_000_000_000,
        mime: 'image/png',
        sha256: 'a'.repeat(64),
      })
      await first.close()

      const second = await openMetadataStore({ driver: 'postgres', url, poolSize: 2 })
      try {
        assert.deepEqual(await second.migrate(), [])
        assert.deepEqual(await second.files.get(added.key), added)
      } finally {
        await second.close()
      }
    })

    test('an orphan removal that meets a save of a document using the file waits for it and keeps the file', async (t) => {
      const { saver, sweeper, file, untilOneWaitsOnALock } = await raceOnOneFile(t, 'raced.png')
      const save = stopInside()
      // The save stops inside its transaction, its reference written but not committed.
      const saving = saver.documents.save('post', [file.key], {
        user: 'alice',
        anyDocument: false,
        within: save.within,
      })
      await save.inside
      const removing = sweeper.documents.removeOrphan(file.key, { storedBefore: Date.now() })
      // Until the removal waits on a lock the save holds.
      await untilOneWaitsOnALock()
      save.release()
      assert.deepEqual((await saving).keys, [file.key])
      assert.equal(await removing, null)
      assert.ok(await saver.files.get(file.key))
      assert.deepEqual((await saver.documents.get('post'))?.keys, [file.key])
    })

    test('a save that meets an orphan removal of a file it uses waits for it and is refused with UE_CONFLICT', async (t) => {
      const { saver, sweeper, file, untilOneWaitsOnALock } = await raceOnOneFile(t, 'swept.png')
      const removal = stopInside()
      // The removal stops inside its transaction, the row deleted but not committed.
      const removing = sweeper.documents.removeOrphan(file.key, {
        storedBefore: Date.now(),
        within: removal.within,
      })
      await removal.inside
      const saving = saver.documents.save('post', [file.key], { user: 'alice', anyDocument: false })
      // It may be refused before the removal's answer is awaited below: handled from the start.
      saving.catch(() => {})
      await untilOneWaitsOnALock()
      removal.release()
      assert.deepEqual(await removing, file)
      await assert.rejects(
        saving,
        (e) => isUeError(e) && e.code === 'UE_CONFLICT' && /save again/.test(e.message),
      )
      assert.equal(await saver.documents.get('post'), null)
      const again = await saver.documents.save('post', [file.key], {
        user: 'alice',
        anyDocument: false,
      })
      assert.deepEqual(again.keys, [])
    })

    test('a first page, a page already read and the page after it are one statement each, a page of a listing changed since is read in a snapshot, and a CJK search is one statement', async (t) => {
      const url = await cluster.createDatabase()
      const store = await openMetadataStore({ driver: 'postgres', url, poolSize: 2 })
      await store.migrate()
      await store.close()
      // Every statement the database is sent, transaction control included.
      const sent: string[] = []
      const pool = new pg.Pool({ connectionString: url, max: 2 })
      const db = new Kysely<DbSchema>({
        dialect: new PostgresDialect({ pool }),
        plugins: [new CamelCasePlugin()],
        log: (event) => {
          sent.push(event.query.sql)
        },
      })
      t.after(() => db.destroy())
      const files = createFileIndex(db)
      const add = (n: number) =>
        files.add({
          key: `2025/01/02/${n}.png` as never,
          category: 'image',
          originalName: `${n}.png`,
          ext: '.png',
          size: 1,
          mime: 'image/png',
          sha256: '',
          createdAt: 1_700_000_000_000 + n,
        })
      for (const n of [1, 2, 3, 4, 5]) await add(n)
      const query = { categories: ['image' as const], exts: ['.png'], size: 2 }
      const names = (page: { items: readonly { originalName: string }[] }) =>
        page.items.map((i) => i.originalName)
      const reads = async (start: number) => {
        sent.length = 0
        const page = await files.list({ ...query, start })
        return { page, sent: [...sent] }
      }

      const first = await reads(0)
      assert.deepEqual(names(first.page), ['5.png', '4.png'])
      assert.equal(first.page.total, 5)
      assert.equal(first.sent.length, 1, first.sent.join('\n'))
      const again = await reads(0)
      assert.deepEqual(again.page, first.page)
      assert.equal(again.sent.length, 1, again.sent.join('\n'))
      const next = await reads(2)
      assert.deepEqual(names(next.page), ['3.png', '2.png'])
      assert.equal(next.sent.length, 1, next.sent.join('\n'))

      // The anchor held for start 4 is of the listing before this file: read again, in a snapshot.
      await add(6)
      const changed = await reads(4)
      assert.deepEqual(names(changed.page), ['2.png', '1.png'])
      assert.equal(changed.page.total, 6)
      assert.ok(
        changed.sent.some((s) => /^start transaction/i.test(s)),
        changed.sent.join('\n'),
      )

      const repo = createMaterialRepository(db)
      const parent = await repo.saveCategory({ name: '分类', parentId: null, order: 0 })
      await repo.saveMaterial({
        name: '活动标题',
        content: '<p>x</p>',
        categoryId: parent.id,
        thumbnail: null,
        tags: [],
        custom: {},
      })
      sent.length = 0
      assert.equal((await repo.categories()).length, 1)
      assert.equal(sent.length, 1, sent.join('\n'))
      sent.length = 0
      const found = await repo.search({ keyword: '标题', page: 1, pageSize: 10 })
      assert.equal(found.total, 1)
      assert.deepEqual(
        found.items.map((m) => m.name),
        ['活动标题'],
      )
      assert.equal(sent.length, 1, sent.join('\n'))
      assert.ok(!sent.some((s) => /lower\(/i.test(s)), sent.join('\n'))
    })

    test('with prepared statements on, the listing and the search are prepared by name on their connection, and with them off nothing is', async (t) => {
      const url = await cluster.createDatabase()
      const store = await openMetadataStore({ driver: 'postgres', url, poolSize: 1 })
      await store.migrate()
      await store.close()
      // One connection, so the statements it prepared are the ones `pg_prepared_statements` shows.
      const preparedAfterReads = async (preparedStatements: boolean) => {
        const db = new Kysely<DbSchema>({
          dialect: postgresDialect(
            new pg.Pool({ connectionString: url, max: 1 }),
            preparedStatements,
          ),
          plugins: [new CamelCasePlugin()],
        })
        t.after(() => db.destroy())
        const files = createFileIndex(db)
        await files.add({
          key: `2025/01/02/${preparedStatements}.png` as never,
          category: 'image',
          originalName: 'a.png',
          ext: '.png',
          size: 1,
          mime: 'image/png',
          sha256: '',
        })
        const repo = createMaterialRepository(db)
        const category = await repo.saveCategory({ name: '分类', parentId: null, order: 0 })
        await repo.saveMaterial({
          name: '活动标题 Title',
          content: '<p>x</p>',
          categoryId: category.id,
          thumbnail: null,
          tags: [],
          custom: {},
        })
        const query = { categories: ['image' as const], exts: ['.png'], start: 0, size: 20 }
        for (let round = 0; round < 2; round++) {
          assert.ok((await files.list({ ...query, start: round })).total >= 1)
          await repo.search({ keyword: '标题', page: 1, pageSize: 10 })
          await repo.search({ keyword: 'Title', page: 1, pageSize: 10 })
        }
        const { rows } = await sql<{ name: string; statement: string }>`
          select "name", "statement" from "pg_prepared_statements"`.execute(db)
        return rows
      }

      const on = await preparedAfterReads(true)
      const texts = on.map((r) => r.statement)
      assert.ok(
        on.every((r) => /^ue_[0-9a-f]{32}$/.test(r.name)),
        JSON.stringify(on),
      )
      assert.equal(new Set(texts).size, texts.length, 'one name per statement text')
      for (const part of [
        'from "file_counts"',
        'from "files" where "category"',
        'from "material_term_counts"',
        'from "material_terms"',
        'select lower($1)',
      ])
        assert.ok(
          texts.some((text) => text.includes(part)),
          `${part} among:\n${texts.join('\n')}`,
        )

      assert.deepEqual(await preparedAfterReads(false), [])
    })

    test('a wrong password is UE_INDEX_FAILED naming the server, never the password', async () => {
      const url = cluster.wrongPasswordUrl()
      const secret = new URL(url).password
      await assert.rejects(openMetadataStore({ driver: 'postgres', url, poolSize: 1 }), (e) => {
        assert.ok(isUeError(e))
        assert.equal(e.code, 'UE_INDEX_FAILED')
        assert.match(e.message, /cannot connect to PostgreSQL at 127\.0\.0\.1:\d+\/postgres/)
        assert.match(e.message, /password authentication failed/)
        assert.ok(!e.message.includes(secret), e.message)
        assert.ok(!e.message.includes(cluster.password), e.message)
        return true
      })
    })

    test('the standalone server stores uploads and serves the seeded materials from PostgreSQL', async (t) => {
      const url = await cluster.createDatabase()
      const srv = await startTestServer(t, {
        index: { driver: 'postgres', url },
        materials: { adminTokens: [ADMIN_TOKEN] },
      })
      assert.deepEqual(srv.ue.config.index, {
        driver: 'postgres',
        url,
        poolSize: 10,
        connectTimeoutMs: 5000,
        queryTimeoutMs: 30000,
        preparedStatements: true,
      })

      const form = new FormData()
      form.append('upfile', blob(png()), 'photo.png')
      const up = await (await fetch(srv.action('image'), { method: 'POST', body: form })).json()
      assert.equal(up.state, 'SUCCESS')
      const listed = await (await fetch(srv.action('listImage'))).json()
      assert.equal(listed.total, 1)
      assert.equal(listed.list[0].url, up.url)

      const materials = materialsClient(`${srv.url}${srv.ue.config.routes.materials}`)
      const seeded = await materials.categories()
      assert.equal(seeded.status, 200)
      assert.equal(seeded.body.length, 3)
      // The demo categories carry explicit ids; a new one must get a fresh id next to them.
      const created = await adminCreate(materials, 'categories', { name: 'New', parentId: null })
      const ids = (await materials.categories()).body.map((c: { id: number }) => c.id)
      assert.equal(ids.length, 4)
      assert.equal(new Set(ids).size, 4)
      assert.ok(ids.includes(created.id))
    })
  })
}

/** A transaction's `within` that holds it until `release()`; `inside` resolves once it is there. */
function stopInside() {
  let release = () => {}
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  let entered = () => {}
  const inside = new Promise<void>((resolve) => {
    entered = resolve
  })
  const within = async () => {
    entered()
    await held
  }
  return { within, inside, release: () => release() }
}
