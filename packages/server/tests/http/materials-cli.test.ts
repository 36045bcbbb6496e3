import assert from 'node:assert/strict'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startServer } from '../../src/standalone/serve.js'
import { runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/temp-dir.js'
import { test } from '../helpers/test.js'

/** Runs the built binary with a data folder of its own, like an operator would. */
function cli(dataDir: string, ...args: string[]) {
  return runCli(args, { UEDITOR_DATA_DIR: dataDir, UEDITOR_LOG_LEVEL: 'silent' }, dataDir)
}

// A child listed before its parent, unsafe HTML, custom fields and kept timestamps.
const DOC = {
  categories: [
    { id: 12, name: '卡片 Cards', parentId: 10, order: 2 },
    { id: 10, name: '正文 Body', parentId: null, order: 1 },
    { id: 11, name: '引用 Quotes', parentId: 10, order: 1 },
  ],
  materials: [
    {
      id: 5,
      name: '引用框',
      content:
        '<section style="color:#555" onclick="alert(1)">“读书”<script>x()</script></section>',
      categoryId: 11,
      tags: ['引用', 'quote'],
      custom: { author: '培根', level: 2 },
      createdAt: '2026-01-02T03:04:05.000Z',
      updatedAt: '2026-01-03T03:04:05.000Z',
    },
    {
      id: 6,
      name: 'Card',
      content: '<p>card</p>',
      categoryId: 12,
      thumbnail: '/img/card.png',
    },
    { id: 7, name: 'Loose', content: '<p>loose</p>' },
  ],
}

function withoutExportTime(text: string): unknown {
  const { exportedAt, ...rest } = JSON.parse(text)
  assert.ok(!Number.isNaN(Date.parse(exportedAt)))
  return rest
}

test('materials import upserts by id, and importing the same file again changes nothing', async (t) => {
  const dir = await tempDir(t, 'ueditor-materials-cli-')
  const file = join(dir, 'in.json')
  await writeFile(file, JSON.stringify(DOC))

  const refused = await cli(dir, 'materials', 'import', file)
  assert.equal(refused.code, 1, 'a fresh data folder has no index, and import makes none unasked')
  assert.match(refused.stderr, new RegExp(`^No index at ${join(dir, 'ueditor.db')}; `))
  assert.match(refused.stderr, /On a new install, import with --create-index\.\n$/)
  assert.deepEqual(await readdir(dir), ['in.json'])

  const first = await cli(dir, 'materials', 'import', file, '--create-index')
  assert.equal(first.code, 0, first.stderr)
  assert.match(first.stdout, new RegExp(`^Creating a new index at ${join(dir, 'ueditor.db')}\n`))
  assert.match(first.stdout, /categories: 3 created, 0 updated, 0 unchanged/)
  assert.match(first.stdout, /materials: {2}3 created, 0 updated, 0 unchanged/)

  const second = await cli(dir, 'materials', 'import', file)
  assert.equal(second.code, 0, second.stderr)
  assert.match(second.stdout, /categories: 0 created, 0 updated, 3 unchanged/)
  assert.match(second.stdout, /materials: {2}0 created, 0 updated, 3 unchanged/)

  const exported = await cli(dir, 'materials', 'export')
  assert.equal(exported.code, 0, exported.stderr)
  const doc = withoutExportTime(exported.stdout) as {
    version: number
    categories: { id: number; name: string; parentId: number | null; order: number }[]
    materials: Record<string, unknown>[]
  }
  assert.equal(doc.version, 1)
  assert.deepEqual(
    doc.categories.map(({ id, name, parentId, order }) => ({ id, name, parentId, order })),
    [DOC.categories[1], DOC.categories[2], DOC.categories[0]],
  )
  assert.deepEqual(doc.materials[0], {
    id: 5,
    name: '引用框',
    content: '<section style="color:#555">“读书”</section>',
    categoryId: 11,
    thumbnail: null,
    tags: ['引用', 'quote'],
    custom: { author: '培根', level: 2 },
    createdAt: '2026-01-02T03:04:05.000Z',
    updatedAt: '2026-01-03T03:04:05.000Z',
  })
  assert.deepEqual(
    doc.materials.map((m) => [m.id, m.categoryId, m.thumbnail]),
    [
      [5, 11, null],
      [6, 12, '/img/card.png'],
      [7, null, null],
    ],
  )
})

test('an export imported into a fresh data folder exports the same again', async (t) => {
  const source = await tempDir(t, 'ueditor-materials-cli-')
  const target = await tempDir(t, 'ueditor-materials-cli-')
  await writeFile(join(source, 'in.json'), JSON.stringify(DOC))
  const seeded = await cli(source, 'materials', 'import', join(source, 'in.json'), '--create-index')
  assert.equal(seeded.code, 0)

  const out = join(source, 'out.json')
  const written = await cli(source, 'materials', 'export', out)
  assert.equal(written.code, 0, written.stderr)
  assert.match(written.stdout, /Exported 3 categories and 3 materials/)
  const imported = await cli(target, 'materials', 'import', out, '--create-index')
  assert.equal(imported.code, 0, imported.stderr)
  assert.match(imported.stdout, /categories: 3 created/)

  const again = await cli(target, 'materials', 'export')
  assert.deepEqual(withoutExportTime(again.stdout), withoutExportTime(await readFile(out, 'utf8')))

  // The server started on that folder shows what was imported, and no demo materials.
  const srv = await startServer({
    env: {},
    config: {
      logLevel: 'silent',
      dataDir: target,
      auth: { mode: 'none' },
      http: { port: 0, host: '127.0.0.1' },
    },
  })
  t.after(() => srv.close())
  const res = await fetch(`${srv.url}/materials/materials`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ categoryId: 10, pageSize: 100 }),
  })
  const page = (await res.json()) as { total: number; items: { id: number }[] }
  assert.deepEqual(
    page.items.map((m) => m.id),
    [6, 5],
  )
})

test('an invalid import file is refused as a whole, listing the problems', async (t) => {
  const dir = await tempDir(t, 'ueditor-materials-cli-')
  const file = join(dir, 'bad.json')
  await writeFile(
    file,
    JSON.stringify({
      categories: [
        { id: 1, name: 'ok', parentId: null },
        { id: 2, name: 'loop a', parentId: 3 },
        { id: 3, name: 'loop b', parentId: 2 },
      ],
      materials: [{ id: 1, name: 'm', content: '' }],
    }),
  )
  const run = await cli(dir, 'materials', 'import', file, '--create-index')
  assert.equal(run.code, 1)
  assert.match(run.stderr, /Import refused, nothing was written: categories\.1\.parentId: .*loop/)

  await writeFile(
    file,
    JSON.stringify({
      materials: [{ id: 1, name: 'm', content: '', thumbnail: 'javascript:alert(1)' }],
    }),
  )
  const unsafe = await cli(dir, 'materials', 'import', file)
  assert.equal(unsafe.code, 1)
  assert.match(unsafe.stderr, /materials\.0\.thumbnail/)

  await writeFile(file, '{"materials":[{"id":1,"name":"m","content":"","__proto__":{"x":1}}]}')
  assert.equal((await cli(dir, 'materials', 'import', file)).code, 1)

  const exported = await cli(dir, 'materials', 'export')
  const doc = withoutExportTime(exported.stdout) as { categories: unknown[]; materials: unknown[] }
  assert.deepEqual([doc.categories, doc.materials], [[], []])
})

test('materials commands print their usage on a wrong call', async (t) => {
  const dir = await tempDir(t, 'ueditor-materials-cli-')
  for (const args of [['materials'], ['materials', 'import'], ['materials', 'frobnicate']]) {
    const run = await cli(dir, ...args)
    assert.equal(run.code, 2, args.join(' '))
    assert.match(run.stderr, /ueditor-server materials import <file\.json>/)
  }
  const missing = await cli(dir, 'materials', 'import', join(dir, 'nope.json'))
  assert.equal(missing.code, 1)
  assert.match(missing.stderr, /No such file/)
})
