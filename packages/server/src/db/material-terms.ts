import { type Kysely, type SqlBool, sql } from '#kysely'

// biome-ignore lint/suspicious/noExplicitAny: also runs inside the migration that creates the tables
type AnyDb = Kysely<any>

/** Keywords of at most this many characters are answered from `material_terms`. */
export const SHORT_KEYWORD = 2

/** Category key of a material without a category (ids start at 1). */
const NO_CATEGORY = 0

/**
 * Writes the terms of these materials (all of them when `ids` is absent), which must have none
 * yet, and adds them to the counts: '' and every substring of one or two characters of the
 * lower-cased name and of the lower-cased tags. The database cuts and lower-cases (its
 * `substr`, `length` and `lower()` count and fold as its `LIKE` does), in one statement.
 */
export async function insertTerms(db: AnyDb, ids?: readonly number[]): Promise<void> {
  if (ids !== undefined && ids.length === 0) return
  const chosen = (alias: string) =>
    ids === undefined
      ? sql<SqlBool>`true`
      : sql<SqlBool>`${sql.ref(`${alias}.id`)} in (${sql.join(ids)})`
  const { longest } = await db
    .selectFrom('materials as m')
    .where(chosen('m'))
    .select(
      sql<number | string | null>`max(case when length(lower(m.name)) > length(lower(m.tags_search))
        then length(lower(m.name)) else length(lower(m.tags_search)) end)`.as('longest'),
    )
    .executeTakeFirstOrThrow()
  const cuts = (column: 'name' | 'tags_search') => sql`
    select substr(lower(${sql.ref(`m.${column}`)}), p.n, w.w) as term, m.id, m.category_id,
      m.created_at
    from materials m cross join widths w
    join positions p on p.n + w.w - 1 <= length(lower(${sql.ref(`m.${column}`)}))
    where ${chosen('m')}`
  await sql`
    insert into material_terms (term, id, category_key, created_at)
    with recursive positions (n) as (
      select 1 union all select n + 1 from positions where n < ${Number(longest ?? 0)}
    ), widths (w) as (select 1 union all select 2)
    select distinct term, id, coalesce(category_id, ${NO_CATEGORY}), created_at from (
      select '' as term, m.id, m.category_id, m.created_at from materials m where ${chosen('m')}
      union all ${cuts('name')}
      union all ${cuts('tags_search')}
    ) as cut
  `.execute(db)
  // The WHERE also keeps SQLite from reading ON CONFLICT as part of the SELECT.
  await sql`
    insert into material_term_counts (term, category_key, n)
    select term, category_key, count(*) from material_terms where ${chosen('material_terms')}
    group by term, category_key
    on conflict (term, category_key) do update set n = material_term_counts.n + excluded.n
  `.execute(db)
}

/**
 * Replaces the terms of these materials (and their counts) with those of their current rows.
 * `replaced`: those of them that may have had terms before (saved over an existing row).
 */
export async function reindexTerms(
  db: AnyDb,
  ids: readonly number[],
  replaced: readonly number[] = ids,
): Promise<void> {
  await dropTerms(db, replaced)
  await insertTerms(db, ids)
}

/** Removes the terms of these materials and takes them out of their counts. */
export async function dropTerms(db: AnyDb, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return
  const listed = sql.join(ids)
  await sql`
    update material_term_counts set n = n - (
      select count(*) from material_terms t
      where t.term = material_term_counts.term
        and t.category_key = material_term_counts.category_key and t.id in (${listed})
    )
    where (term, category_key) in (select term, category_key from material_terms where id in (${listed}))
  `.execute(db)
  await db.deleteFrom('material_terms').where('id', 'in', ids).execute()
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
