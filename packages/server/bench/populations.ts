import Database from 'better-sqlite3'
import { CamelCasePlugin, type Insertable, Kysely, SqliteDialect } from 'kysely'
import type { MaterialRepository } from '../src/db/material-repo.js'
import { openMetadataStore } from '../src/db/open.js'
import type { DbSchema, FilesTable } from '../src/db/schema.js'
import type { StorageKey } from '../src/shared/types.js'

// Each population is inserted in batches so no loop runs unbounded and progress is visible.
const FILE_BATCH = 20_000
// Nine columns a row: well under SQLite's 32,766 bound parameters a statement.
const ROWS_PER_STATEMENT = 1_000
const MATERIAL_BATCH = 2_000
// Fixed creation times (one second apart) so every run pages through the same order.
const EPOCH = Date.UTC(2024, 0, 1)

/**
 * Grows the image index in `file` from `from` to `to` rows owned by `owner`: the index layer's
 * migrations make the schema, then multi-row inserts through Kysely, one transaction per batch
 * (the index's own `add`, a statement and a commit per row, would take most of an hour at 1M).
 * The listing scenario checks that the server counts exactly these rows before it measures.
 */
export async function addImages(
  file: string,
  owner: string,
  from: number,
  to: number,
): Promise<void> {
  const store = await openMetadataStore({ driver: 'sqlite', file })
  await store.migrate().finally(() => store.close())
  const db = new Kysely<DbSchema>({
    dialect: new SqliteDialect({ database: new Database(file) }),
    plugins: [new CamelCasePlugin()],
  })
  try {
    for (let start = from; start < to; start += FILE_BATCH) {
      const end = Math.min(to, start + FILE_BATCH)
      await db.transaction().execute(async (trx) => {
        for (let i = start; i < end; i += ROWS_PER_STATEMENT) {
          const rows = Array.from({ length: Math.min(ROWS_PER_STATEMENT, end - i) }, (_, k) =>
            imageRow(i + k, owner),
          )
          await trx.insertInto('files').values(rows).execute()
        }
      })
    }
  } finally {
    await db.destroy()
  }
}

function imageRow(i: number, owner: string): Insertable<FilesTable> {
  return {
    key: `image/20240101/${String(i).padStart(8, '0')}.png` as StorageKey,
    category: 'image',
    originalName: `photo-${i}.png`,
    ext: '.png',
    size: 102_400,
    mime: 'image/png',
    sha256: i.toString(16).padStart(64, '0'),
    createdAt: EPOCH + i * 1000,
    owner,
  }
}

export interface MaterialTree {
  /** A top-level category with children; a search by it covers its whole subtree. */
  parentId: number
}

const CHILDREN = 8
const PARENTS = 4

/**
 * `count` materials in PARENTS top-level categories of CHILDREN children each, through the
 * materials repository. One name in ten holds `标题`, the keyword the designer's users type.
 */
export async function addMaterials(file: string, count: number): Promise<MaterialTree> {
  const store = await openMetadataStore({ driver: 'sqlite', file })
  try {
    await store.migrate()
    const leaves: number[] = []
    let parentId = 0
    for (let p = 0; p < PARENTS; p++) {
      const parent = await store.materials.saveCategory({
        name: `分类 ${p}`,
        parentId: null,
        order: p,
      })
      if (p === 0) parentId = parent.id
      for (let c = 0; c < CHILDREN; c++) {
        const child = await store.materials.saveCategory({
          name: `子类 ${p}-${c}`,
          parentId: parent.id,
          order: c,
        })
        leaves.push(child.id)
      }
    }
    for (let start = 0; start < count; start += MATERIAL_BATCH) {
      const end = Math.min(count, start + MATERIAL_BATCH)
      await store.materials.transaction((repo) => saveMaterials(repo, leaves, start, end))
    }
    return { parentId }
  } finally {
    await store.close()
  }
}

async function saveMaterials(
  repo: MaterialRepository,
  leaves: number[],
  start: number,
  end: number,
) {
  for (let i = start; i < end; i++) {
    const name = i % 10 === 0 ? `活动标题样式 ${i}` : `正文样式 ${i}`
    await repo.saveMaterial({
      name,
      content: `<section style="color:#333"><p>${name}</p></section>`,
      categoryId: leaves[i % leaves.length] ?? null,
      thumbnail: null,
      tags: i % 3 === 0 ? ['title', '活动'] : ['body'],
      custom: {},
      createdAt: EPOCH + i * 1000,
    })
  }
}
