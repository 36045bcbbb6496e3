import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { openMetadataStore } from '../../src/db/open.js'
import type { MetadataStore } from '../../src/db/types.js'
import { isUeError } from '../../src/shared/errors.js'
import { aiUsageContract } from '../contracts/ai-usage.contract.js'
import { fileIndexContract } from '../contracts/file-index.contract.js'
import { materialRepositoryContract } from '../contracts/material-repo.contract.js'
import { uploadLedgerContract } from '../contracts/upload-ledger.contract.js'
import { blob, png } from '../helpers/fixtures.js'
import { ADMIN_TOKEN, adminCreate, materialsClient } from '../helpers/materials.js'
import { skipOrFail, startPostgresLane } from '../helpers/postgres.js'
import { startTestServer } from '../helpers/start-server.js'

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
  fileIndexContract('postgres', open, openNodes)
  materialRepositoryContract('postgres', open)
  aiUsageContract('postgres', openNodes)
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
        '0008_uploads',
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
