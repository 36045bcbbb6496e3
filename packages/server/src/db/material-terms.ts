import { type Kysely, sql } from 'kysely'

// biome-ignore lint/suspicious/noExplicitAny: also runs inside the migration that creates the tables
type AnyDb = Kysely<any>

/** Keywords of at most this many characters are answered from `material_terms`. */
export const SHORT_KEYWORD = 2

/** Rows per insert statement: far below either dialect's parameter limit. */
const BATCH = 500

/** Category key of a material without a category (ids start at 1). */
const NO_CATEGORY = 0

/**
 * '' and every substring of one or two characters (code points, as LIKE counts them) of each
 * text, which the database has already lower-cased, so the terms match its own `lower()`.
 */
export function termsOf(texts: readonly string[]): string[] {
  const terms = new Set([''])
  for (const text of texts) {
    const chars = Array.from(text)
    chars.forEach((c, i) => {
      terms.add(c)
      if (i + 1 < chars.length) terms.add(c + chars[i + 1])
    })
  }
  return [...terms].sort()
}

/** Replaces the terms of one material (and their counts) with those of its current row. */
export async function reindexTerms(db: AnyDb, id: number): Promise<void> {
  await dropTerms(db, id)
  const row = await db
    .selectFrom('materials')
    .where('id', '=', id)
    .select([
      sql<string>`lower(name)`.as('name'),
      sql<string>`lower(tags_search)`.as('tags'),
      'category_id as categoryId',
      'created_at as createdAt',
    ])
    .executeTakeFirst()
  if (row === undefined) return
  const rows = termsOf([row.name, row.tags]).map((term) => ({
    term,
    id,
    category_key: row.categoryId ?? NO_CATEGORY,
    created_at: row.createdAt,
  }))
  for (let i = 0; i < rows.length; i += BATCH)
    await db
      .insertInto('material_terms')
      .values(rows.slice(i, i + BATCH))
      .execute()
  // `where true`: SQLite needs it to read an upsert after INSERT ... SELECT.
  await sql`
    insert into material_term_counts (term, category_key, n)
    select term, category_key, 1 from material_terms where id = ${id} and true
    on conflict (term, category_key) do update set n = material_term_counts.n + 1
  `.execute(db)
}

/** Removes the terms of one material and takes it out of their counts. */
export async function dropTerms(db: AnyDb, id: number): Promise<void> {
  await sql`
    update material_term_counts set n = n - 1
    where (term, category_key) in (select term, category_key from material_terms where id = ${id})
  `.execute(db)
  await db.deleteFrom('material_terms').where('id', '=', id).execute()
}

/** After materials moved out of or into these categories: their terms follow, counts recomputed. */
export async function moveTerms(db: AnyDb, from: readonly number[], to: number | null) {
  const target = to ?? NO_CATEGORY
  await db
    .updateTable('material_terms')
    .set({ category_key: target })
    .where('category_key', 'in', from)
    .execute()
  const keys = [...from, target]
  await db.deleteFrom('material_term_counts').where('category_key', 'in', keys).execute()
  await db
    .insertInto('material_term_counts')
    .columns(['term', 'category_key', 'n'])
    .expression(
      db
        .selectFrom('material_terms')
        .where('category_key', 'in', keys)
        .groupBy(['term', 'category_key'])
        .select(['term', 'category_key', (eb) => eb.fn.countAll().as('n')]),
    )
    .execute()
}

/** After every material of these categories was deleted. */
export async function dropTermsIn(db: AnyDb, categoryIds: readonly number[]): Promise<void> {
  await db.deleteFrom('material_terms').where('category_key', 'in', categoryIds).execute()
  await db.deleteFrom('material_term_counts').where('category_key', 'in', categoryIds).execute()
}
