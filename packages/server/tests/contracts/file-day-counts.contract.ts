import assert from 'node:assert/strict'
import type { FileEntry, MetadataStore, NewFileEntry } from '../../src/db/types.js'
import type { Category, StorageKey } from '../../src/shared/types.js'
import { describe, type TestContext, test } from '../helpers/test.js'

/** A store over a new, empty database, and plain SQL on the same database beside it. */
export interface StoreWithSql {
  store: MetadataStore
  all(sql: string): Promise<Record<string, unknown>[]>
  exec(sql: string): Promise<void>
  close(): Promise<void>
}

const DAY = 86_400_000

/** What `file_day_counts` must hold for `files`, computed here the slow way; zero rows left out. */
function expectedCounts(files: readonly FileEntry[]): string[] {
  const counts = new Map<string, number>()
  for (const f of files) {
    const day = f.createdAt < 0 ? -1 : Math.floor(f.createdAt / DAY)
    for (const scope of ['*', f.owner === null ? '-' : `u:${f.owner}`]) {
      const key = [scope, f.category, f.ext, day].join(' ')
      counts.set(key, (counts.get(key) ?? 0) + 1)
    }
  }
  return [...counts].map(([key, n]) => `${key} ${n}`).sort()
}

async function storedCounts(db: StoreWithSql): Promise<string[]> {
  const rows = await db.all('select scope, category, ext, day, n from file_day_counts where n <> 0')
  return rows.map((r) => `${r.scope} ${r.category} ${r.ext} ${Number(r.day)} ${Number(r.n)}`).sort()
}

/** The per-day counts behind deep listing offsets, on any dialect. */
export function fileDayCountsContract(name: string, open: () => Promise<StoreWithSql>): void {
  async function fresh(t: TestContext): Promise<StoreWithSql> {
    const db = await open()
    t.after(() => db.close())
    await db.store.migrate()
    return db
  }

  async function addSome(store: MetadataStore, count: number): Promise<FileEntry[]> {
    const categories: Category[] = ['image', 'file', 'scrawl']
    const added: FileEntry[] = []
    for (let i = 0; i < count; i++)
      added.push(
        await store.files.add(
          entry({
            category: categories[i % 3],
            ext: i % 4 === 0 ? '' : ['.png', '.jpg'][i % 2],
            owner: i % 5 === 0 ? null : ['alice', 'bob'][i % 2],
            createdAt: i % 7 === 0 ? -i - 1 : (i % 6) * DAY + i * 997,
          }),
        ),
      )
    return added
  }

  describe(`per-day file counts: ${name}`, () => {
    test('keeps the count of every scope, category, extension and day exact through adds and removes', async (t) => {
      const db = await fresh(t)
      const files = await addSome(db.store, 30)
      assert.deepEqual(await storedCounts(db), expectedCounts(files))
      const removed = files.filter((_, i) => i % 3 === 1)
      for (const f of removed) assert.equal(await db.store.files.remove(f.key), true)
      const kept = files.filter((f) => !removed.includes(f))
      assert.deepEqual(await storedCounts(db), expectedCounts(kept))
    })

    test('counts the files an index already holds when the migration first runs', async (t) => {
      const db = await fresh(t)
      const files = await addSome(db.store, 25)
      // As an index from before the per-day counts: no table, no triggers, the migration not run.
      if (db.store.dialect === 'postgres') {
        await db.exec('drop trigger files_day_counts on files')
        await db.exec('drop function files_day_counts_apply()')
      } else
        for (const op of ['insert', 'delete', 'update'])
          await db.exec(`drop trigger files_day_counts_${op}`)
      await db.exec('drop table file_day_counts')
      // Nor the migrations after it (the migrator runs them in order).
      await db.exec('drop table rate_limits')
      await db.exec(
        `delete from kysely_migration where name in ('0011_file_day_counts', '0012_rate_limits')`,
      )
      const later = await db.store.files.add(entry({ createdAt: 5 * DAY }))
      assert.deepEqual(await db.store.migrate(), ['0011_file_day_counts', '0012_rate_limits'])
      assert.deepEqual(await storedCounts(db), expectedCounts([...files, later]))
      const page = await db.store.files.list({ categories: ['image'], start: 5, size: 2 })
      const images = [...files, later]
        .filter((f) => f.category === 'image')
        .sort((a, b) => b.createdAt - a.createdAt || b.id - a.id)
      assert.deepEqual(
        page.items.map((f) => f.key),
        images.slice(5, 7).map((f) => f.key),
      )
    })
  })
}

let seq = 0

function entry(over: Partial<NewFileEntry> = {}): NewFileEntry {
  seq += 1
  return {
    key: `2025/01/02/day-${seq}.png` as StorageKey,
    category: 'image',
    originalName: `photo ${seq}.png`,
    ext: '.png',
    size: 10,
    mime: 'image/png',
    sha256: '',
    owner: null,
    ...over,
  }
}
