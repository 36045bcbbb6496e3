import { CompiledQuery } from '#kysely'
import { named } from './named-statements.js'
import type { CategoryRow, MaterialRow } from './schema.js'
import { Parameters } from './sql-parameters.js'

/*
 * The statements of a search page, written as SQL text for the same reasons as the listing's
 * (listing-sql.ts): building them with Kysely cost a tenth of the request, and text runs in a
 * synchronous SQLite snapshot as well as in a Kysely transaction. Columns are named as the
 * repository reads them. `categoryKeys` / `categoryIds` undefined: every category.
 */

/** Every column of a material, named as `MaterialRow` names them. */
const MATERIAL_COLUMNS =
  '"id", "name", "content", "category_id" as "categoryId", "thumbnail", "tags", ' +
  '"tags_search" as "tagsSearch", "custom", "created_at" as "createdAt", "updated_at" as "updatedAt"'

/** Every category, in the order the tree shows them. */
export function categoriesQuery(): CompiledQuery<CategoryRow> {
  return named(
    CompiledQuery.raw(
      'select "id", "name", "parent_id" as "parentId", "sort_order" as "sortOrder", ' +
        '"created_at" as "createdAt", "updated_at" as "updatedAt" from "categories" ' +
        'order by "sort_order", "id"',
    ) as CompiledQuery<CategoryRow>,
  )
}

/** The keyword folded by PostgreSQL's `lower()`, which follows the database's locale. */
export function lowerQuery(text: string): CompiledQuery<{ term: string }> {
  return named(
    CompiledQuery.raw('select lower($1) as "term"', [text]) as CompiledQuery<{ term: string }>,
  )
}

/** How many materials' terms hold `term`, from the maintained counts. */
export function termCountQuery(
  postgres: boolean,
  term: string,
  categoryKeys: readonly number[] | undefined,
): CompiledQuery<{ n: string | number | null }> {
  const p = new Parameters(postgres)
  const text = termCountText(p, term, categoryKeys)
  return named(CompiledQuery.raw(text, p.values) as CompiledQuery<{ n: string | number | null }>)
}

function termCountText(
  p: Parameters,
  term: string,
  categoryKeys: readonly number[] | undefined,
): string {
  return (
    `select sum("n") as "n" from "material_term_counts" where "term" = ${p.one(term)}` +
    inCategories(p, categoryKeys)
  )
}

const NEWEST_FIRST = ' order by "created_at" desc, "id" desc'

/** The ids of the first `limit` materials whose terms hold `term`, newest first. */
function termIdsText(
  p: Parameters,
  term: string,
  categoryKeys: readonly number[] | undefined,
  limit: number,
): string {
  return (
    `select "id" from "material_terms" where "term" = ${p.one(term)}` +
    inCategories(p, categoryKeys) +
    `${NEWEST_FIRST} limit ${p.rows(limit)}`
  )
}

/** The page of materials whose terms hold `term` (newest first), and the one with `alsoId`. */
export function termPageQuery(
  postgres: boolean,
  term: string,
  categoryKeys: readonly number[] | undefined,
  alsoId: number | undefined,
  offset: number,
  pageSize: number,
): CompiledQuery<MaterialRow> {
  const p = new Parameters(postgres)
  const matching = termIdsText(p, term, categoryKeys, offset + pageSize)
  const text =
    `select ${MATERIAL_COLUMNS} from "materials" where ("id" in (${matching})` +
    (alsoId === undefined ? '' : ` or "id" = ${p.one(alsoId)}`) +
    `)${NEWEST_FIRST} limit ${p.rows(pageSize)} offset ${p.rows(offset)}`
  return named(CompiledQuery.raw(text, p.values) as CompiledQuery<MaterialRow>)
}

/** A search page and its total, read by one statement (`termSearchQuery`). */
export interface TermSearch {
  n: string | number | null
  rows: MaterialRow[]
}

/**
 * PostgreSQL only: `termCountQuery` and the page of `termPageQuery` (without `alsoId`) as one
 * statement, so one round trip and no transaction. The page takes its ids as an array
 * (`= any(array(…))`), which PostgreSQL plans as at most a few index probes whatever the limit,
 * where the `in (…)` of `termPageQuery` costs it more to plan on every run.
 */
export function termSearchQuery(
  term: string,
  categoryKeys: readonly number[] | undefined,
  offset: number,
  pageSize: number,
): CompiledQuery<TermSearch> {
  const p = new Parameters(true)
  const count = termCountText(p, term, categoryKeys)
  const ids = termIdsText(p, term, categoryKeys, offset + pageSize)
  const page =
    `select ${MATERIAL_COLUMNS} from "materials" where "id" = any(array(${ids}))` +
    `${NEWEST_FIRST} limit ${p.rows(pageSize)} offset ${p.rows(offset)}`
  const text =
    `select (${count}) as "n", (select coalesce(json_agg("r" order by "r"."createdAt" desc, ` +
    `"r"."id" desc), '[]') from (${page}) as "r") as "rows"`
  return named(CompiledQuery.raw(text, p.values) as CompiledQuery<TermSearch>)
}

/**
 * The material `id` when it is in the categories and its terms do not already hold `term` (then
 * the term's count has it), else no row.
 */
export function extraIdQuery(
  postgres: boolean,
  id: number,
  term: string,
  categoryIds: readonly number[] | undefined,
): CompiledQuery<{ id: number | string }> {
  const p = new Parameters(postgres)
  const text =
    `select "id" from "materials" where "id" = ${p.one(id)}` +
    (categoryIds === undefined ? '' : ` and "category_id" in (${p.list(categoryIds)})`) +
    ` and not exists (select "id" from "material_terms" where "term" = ${p.one(term)}` +
    ` and "id" = ${p.one(id)})`
  return named(CompiledQuery.raw(text, p.values) as CompiledQuery<{ id: number | string }>)
}

/** A longer keyword, matched literally: how many materials match. */
export function literalCountQuery(
  postgres: boolean,
  keyword: string,
  categoryIds: readonly number[] | undefined,
  exactId: number | undefined,
): CompiledQuery<{ total: number | string }> {
  const p = new Parameters(postgres)
  const where = literalMatch(p, postgres, keyword, categoryIds, exactId)
  return named(
    CompiledQuery.raw(
      `select count(*) as "total" from "materials" where ${where}`,
      p.values,
    ) as CompiledQuery<{ total: number | string }>,
  )
}

/** A longer keyword, matched literally: one page of the matches, newest first. */
export function literalPageQuery(
  postgres: boolean,
  keyword: string,
  categoryIds: readonly number[] | undefined,
  exactId: number | undefined,
  offset: number,
  pageSize: number,
): CompiledQuery<MaterialRow> {
  const p = new Parameters(postgres)
  const where = literalMatch(p, postgres, keyword, categoryIds, exactId)
  const text =
    `select ${MATERIAL_COLUMNS} from "materials" where ${where}` +
    `${NEWEST_FIRST} limit ${p.rows(pageSize)} offset ${p.rows(offset)}`
  return named(CompiledQuery.raw(text, p.values) as CompiledQuery<MaterialRow>)
}

/**
 * `lower(name or tags) LIKE %keyword%` (`%`, `_` and `\` literal), or the exact id. On SQLite the
 * trigram index answers a quoted phrase first; its matches are a superset of the literal ones (it
 * folds all of Unicode's case, `lower()` only ASCII), which the LIKE then narrows. `lower()` is
 * on both sides: ASCII-only on SQLite, Unicode on PostgreSQL, symmetric on each.
 */
function literalMatch(
  p: Parameters,
  postgres: boolean,
  keyword: string,
  categoryIds: readonly number[] | undefined,
  exactId: number | undefined,
): string {
  // Parameters are numbered in the order they are added, so the text is built left to right.
  const inCategories =
    categoryIds === undefined ? '' : `"category_id" in (${p.list(categoryIds)}) and `
  const phrase = `"${keyword.replaceAll('"', '""')}"`
  const narrowed = postgres
    ? ''
    : `"id" in (select rowid from "materials_fts" where "materials_fts" match ${p.one(phrase)}) and `
  const pattern = `%${keyword.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
  const like = (column: string) => `lower("${column}") like lower(${p.one(pattern)}) escape '\\'`
  const text = `${narrowed}(${like('name')} or ${like('tags_search')})`
  return exactId === undefined
    ? `${inCategories}(${text})`
    : `${inCategories}((${text}) or "id" = ${p.one(exactId)})`
}

function inCategories(p: Parameters, keys: readonly number[] | undefined): string {
  return keys === undefined ? '' : ` and "category_key" in (${p.list(keys)})`
}
