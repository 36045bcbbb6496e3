import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type RunningServer, startServer } from '@ueditor-backend/server'
import type { Page } from 'playwright-core'
import type { MaterialCategory, StyleListData } from '../../src/types.js'
import { describe, type TestContext, test } from '../helpers/test.js'
import { launchChromium } from './chromium.js'

const TOKEN = 'browser-test-read-token-0123456789'

interface ServiceCategory {
  id: number
  name: string
  children: ServiceCategory[]
}

async function startMaterialsServer(t: TestContext): Promise<RunningServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ueditor-loaders-'))
  const server = await startServer({
    env: {},
    config: { dataDir, logLevel: 'silent', http: { port: 0 }, materials: { tokens: [TOKEN] } },
  })
  t.after(async () => {
    await server.close()
    await rm(dataDir, { recursive: true, force: true })
  })
  return server
}

/** A page on the server's origin with the built IIFE bundle loaded. */
async function pageWithLoaders(t: TestContext, server: RunningServer): Promise<Page | null> {
  const browser = await launchChromium(t)
  if (!browser) return null
  const page = await browser.newPage()
  await page.goto(`${server.url}/healthz`)
  await page.addScriptTag({ url: '/materials/loaders.iife.js' })
  return page
}

function titlesOf(tree: MaterialCategory[]): unknown[] {
  return tree.map((c) => [c.title, titlesOf(c._child ?? [])])
}
function namesOf(tree: ServiceCategory[]): unknown[] {
  return tree.map((c) => [c.name, namesOf(c.children)])
}

describe('the loaders bundle in Chromium against the real materials API', () => {
  test('categoryLoader maps the real tree and styleLoader the real first page', async (t) => {
    const server = await startMaterialsServer(t)
    const page = await pageWithLoaders(t, server)
    if (!page) return
    const auth = { Authorization: `Bearer ${TOKEN}` }
    const serviceTree = (await (
      await fetch(`${server.url}/materials/categories`, { headers: auth })
    ).json()) as ServiceCategory[]
    const servicePage = await (
      await fetch(`${server.url}/materials/materials`, {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: JSON.stringify({ categoryId: 0, keyword: '', page: 1, pageSize: 100 }),
      })
    ).json()
    assert.ok(serviceTree.length >= 3, 'the demo materials are seeded')

    const result = await page.evaluate(async (token) => {
      localStorage.setItem('access_token', token)
      const { createMaterialLoaders } = (
        window as unknown as { UEditorBackendLoaders: typeof import('../../src/index.js') }
      ).UEditorBackendLoaders
      const { categoryLoader, styleLoader } = createMaterialLoaders({ baseUrl: location.origin })
      return {
        tree: await categoryLoader(),
        page: await styleLoader({ categoryId: 0, keywords: '', page: 1, pageSize: 100 }),
      }
    }, TOKEN)

    assert.deepEqual(titlesOf(result.tree), namesOf(serviceTree))
    assert.equal(result.tree[0]?.id, serviceTree[0]?.id)
    assert.equal(result.page.total, servicePage.total)
    assert.equal(result.page.pageSize, servicePage.pageSize)
    assert.equal(result.page.records.length, servicePage.items.length)
    const first = result.page.records[0]
    assert.equal(first?.id, servicePage.items[0].id)
    assert.equal(first?.title, servicePage.items[0].name)
    assert.equal(first?.html, servicePage.items[0].content)
    assert.equal(first?.categoryId, servicePage.items[0].categoryId)
  })

  test('the Bearer token from localStorage is sent, and without it the server refuses and the loaders give empty results', async (t) => {
    const server = await startMaterialsServer(t)
    const page = await pageWithLoaders(t, server)
    if (!page) return
    const seen: (string | undefined)[] = []
    page.on('request', (r) => {
      if (r.url().includes('/materials/materials')) seen.push(r.headers().authorization)
    })
    const result = await page.evaluate(async (token) => {
      const { createStyleLoader, createCategoryLoader } = (
        window as unknown as { UEditorBackendLoaders: typeof import('../../src/index.js') }
      ).UEditorBackendLoaders
      localStorage.removeItem('access_token')
      const anonymous = await createStyleLoader({ retries: 0 })({ page: 2, pageSize: 5 })
      const noTree = await createCategoryLoader({ retries: 0 })()
      localStorage.setItem('access_token', token)
      const withToken = await createStyleLoader({ retries: 0 })({ page: 1, pageSize: 5 })
      return { anonymous, noTree, withToken }
    }, TOKEN)
    assert.deepEqual(result.anonymous, { records: [], total: 0, page: 2, pageSize: 5 })
    assert.deepEqual(result.noTree, [])
    assert.ok(result.withToken.records.length > 0)
    assert.deepEqual(seen, [undefined, `Bearer ${TOKEN}`])
  })

  test('a superseded styleLoader call resolves empty and the newer result wins', async (t) => {
    const server = await startMaterialsServer(t)
    const page = await pageWithLoaders(t, server)
    if (!page) return
    const result = await page.evaluate(async (token) => {
      localStorage.setItem('access_token', token)
      const { createStyleLoader } = (
        window as unknown as { UEditorBackendLoaders: typeof import('../../src/index.js') }
      ).UEditorBackendLoaders
      const styleLoader = createStyleLoader({})
      const applied: StyleListData[] = []
      const older = styleLoader({ categoryId: 0, page: 1, pageSize: 100 }).then((r) =>
        applied.push(r),
      )
      const newer = styleLoader({ categoryId: 0, page: 1, pageSize: 2 }).then((r) =>
        applied.push(r),
      )
      await Promise.all([older, newer])
      return applied
    }, TOKEN)
    assert.equal(result.length, 2)
    assert.deepEqual(result[0], { records: [], total: 0, page: 1, pageSize: 100 })
    const latest = result[1] as StyleListData
    assert.equal(latest.pageSize, 2)
    assert.equal(latest.records.length, 2)
  })

  test('when the server is stopped the loaders resolve to empty results instead of rejecting', async (t) => {
    const server = await startMaterialsServer(t)
    const page = await pageWithLoaders(t, server)
    if (!page) return
    await server.close()
    const result = await page.evaluate(async () => {
      const { createMaterialLoaders } = (
        window as unknown as { UEditorBackendLoaders: typeof import('../../src/index.js') }
      ).UEditorBackendLoaders
      const { categoryLoader, styleLoader } = createMaterialLoaders({
        baseUrl: location.origin,
        retryDelay: (n) => n * 10,
      })
      return { tree: await categoryLoader(), page: await styleLoader() }
    })
    assert.deepEqual(result, { tree: [], page: { records: [], total: 0, page: 1, pageSize: 20 } })
  })

  test('the example designer page wires the ESM bundle and shows the categories and materials', async (t) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ueditor-loaders-'))
    // The example page reads without a token: reads are public on loopback when none is set
    // and anonymous use was chosen.
    const server = await startServer({
      env: {},
      config: { dataDir, logLevel: 'silent', http: { port: 0 }, auth: { mode: 'none' } },
    })
    t.after(async () => {
      await server.close()
      await rm(dataDir, { recursive: true, force: true })
    })
    const browser = await launchChromium(t)
    if (!browser) return
    const page = await browser.newPage()
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(e.message))
    await page.goto(`${server.url}/examples/designer.html`)
    await page.locator('#materials .card').first().waitFor()
    const categories = await page.locator('#categories button').count()
    const cards = await page.locator('#materials .card').count()
    assert.ok(categories >= 4, `categories shown: ${categories}`)
    assert.ok(cards >= 3, `materials shown: ${cards}`)
    assert.deepEqual(errors, [])
  })
})
