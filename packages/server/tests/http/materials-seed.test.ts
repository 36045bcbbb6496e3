import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ServerConfigInput } from '../../src/config/schema.js'
import { sanitizeMaterialHtml } from '../../src/materials/sanitize.js'
import { DEMO_MATERIALS } from '../../src/materials/seed.js'
import { startServer } from '../../src/standalone/serve.js'
import { ADMIN_TOKEN, materialsClient } from '../helpers/materials.js'
import { startTestServer } from '../helpers/start-server.js'
import { test } from '../helpers/test.js'

interface Node {
  name: string
  children: Node[]
}

async function tree(base: string): Promise<Node[]> {
  return (await (await fetch(`${base}/materials/categories`)).json()) as Node[]
}

async function names(base: string): Promise<string[]> {
  const res = await fetch(`${base}/materials/materials`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ categoryId: 0, keyword: '', page: 1, pageSize: 100 }),
  })
  return ((await res.json()) as { items: { name: string }[] }).items.map((m) => m.name).sort()
}

/**
 * Starts the standalone server on an existing data folder (a restart keeps the folder), open to
 * anyone on purpose.
 */
async function startOn(dataDir: string, config: ServerConfigInput = {}, env = {}) {
  return startServer({
    env,
    config: {
      logLevel: 'silent',
      auth: { mode: 'none' },
      ...config,
      dataDir,
      http: { port: 0, host: '127.0.0.1', shutdownGraceMs: 1_000 },
    },
  })
}

test('a fresh data folder shows the demo categories, two levels deep, and their materials', async (t) => {
  const srv = await startTestServer(t)
  const categories = await tree(srv.url)
  assert.equal(categories.length, 3)
  for (const top of categories) {
    assert.equal(top.children.length, 2, top.name)
    for (const child of top.children) assert.deepEqual(child.children, [])
  }
  const all = await names(srv.url)
  assert.equal(all.length, DEMO_MATERIALS.materials.length)
  assert.ok(
    all.some((n) => /[\u4e00-\u9fff]/.test(n)),
    'Chinese materials',
  )
  assert.ok(
    all.some((n) => /^[A-Za-z]/.test(n)),
    'English materials',
  )
})

test('each demo category lists its own materials', async (t) => {
  const srv = await startTestServer(t)
  const categories = (await (await fetch(`${srv.url}/materials/categories`)).json()) as {
    id: number
    children: { id: number }[]
  }[]
  for (const top of categories) {
    const res = await fetch(`${srv.url}/materials/materials`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ categoryId: top.id, pageSize: 100 }),
    })
    const page = (await res.json()) as { total: number; items: { categoryId: number }[] }
    assert.ok(page.total >= 2, `category ${top.id}`)
    const childIds = top.children.map((c) => c.id)
    for (const item of page.items) assert.ok(childIds.includes(item.categoryId))
  }
})

test('the demo materials pass the sanitiser unchanged', () => {
  for (const m of DEMO_MATERIALS.materials)
    assert.equal(sanitizeMaterialHtml(m.content), m.content, m.name)
})

test('materials.seed false, or UEDITOR_MATERIALS_SEED=false, starts with no materials', async (t) => {
  const off = await startTestServer(t, { materials: { seed: false } })
  assert.deepEqual(await tree(off.url), [])
  assert.deepEqual(await names(off.url), [])

  const dataDir = await mkdtemp(join(tmpdir(), 'ueditor-seed-'))
  t.after(() => rm(dataDir, { recursive: true, force: true }))
  const fromEnv = await startOn(dataDir, {}, { UEDITOR_MATERIALS_SEED: 'false' })
  t.after(() => fromEnv.close())
  assert.deepEqual(await tree(fromEnv.url), [])
})

test('a restart does not load the demo again, even after everything was deleted', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'ueditor-seed-'))
  t.after(() => rm(dataDir, { recursive: true, force: true }))

  const first = await startOn(dataDir, { materials: { adminTokens: [ADMIN_TOKEN] } })
  const seeded = await names(first.url)
  const seededTree = await tree(first.url)
  await first.close()

  const second = await startOn(dataDir, { materials: { adminTokens: [ADMIN_TOKEN] } })
  assert.deepEqual(await names(second.url), seeded)
  assert.deepEqual(await tree(second.url), seededTree)
  const admin = materialsClient(`${second.url}/materials`, ADMIN_TOKEN)
  for (const top of (await admin.categories()).body as { id: number }[])
    assert.equal(
      (await admin.request('DELETE', `/admin/categories/${top.id}?cascade=true`)).status,
      200,
    )
  assert.deepEqual(await names(second.url), [])
  await second.close()

  const third = await startOn(dataDir)
  t.after(() => third.close())
  assert.deepEqual(await tree(third.url), [])
  assert.deepEqual(await names(third.url), [])
})
