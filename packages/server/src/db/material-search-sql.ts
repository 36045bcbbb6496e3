import { CompiledQuery } from 'kysely'
import type { MaterialRow } from './schema.js'
import { Parameters } from './sql-parameters.js'

/*
 * The two statements of a short-keyword search page, written as SQL text for the same reason as
 * the listing's (listing-sql.ts): building them with Kysely cost a tenth of the request.
 * `categoryKeys` undefined: every category.
 */

/** How many materials' terms hold `term`, from the maintained counts. */
export function termCountQuery(
  postgres: boolean,
  term: string,
  categoryKeys: readonly number[] | undefined,
): CompiledQuery<{ n: string | number | null }> {
  const p = new Parameters(postgres)
  const text =
    `select sum("n") as "n" from "material_term_counts" where "term" = ${p.one(term)}` +
    inCategories(p, categoryKeys)
  return CompiledQuery.raw(text, p.values) as CompiledQuery<{ n: string | number | null }>
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
  const order = ' order by "created_at" desc, "id" desc'
  const matching =
    `select "id" from "material_terms" where "term" = ${p.one(term)}` +
    inCategories(p, categoryKeys) +
    `${order} limit ${p.one(offset + pageSize)}`
  const text =
    `select * from "materials" where ("id" in (${matching})` +
    (alsoId === undefined ? '' : ` or "id" = ${p.one(alsoId)}`) +
    `)${order} limit ${p.one(pageSize)} offset ${p.one(offset)}`
  return CompiledQuery.raw(text, p.values) as CompiledQuery<MaterialRow>
}

function inCategories(p: Parameters, keys: readonly number[] | undefined): string {
  return keys === undefined ? '' : ` and "category_key" in (${p.list(keys)})`
}
