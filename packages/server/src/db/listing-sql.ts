import { CompiledQuery } from '#kysely'
import type { Category, StorageKey } from '../shared/types.js'
import { named } from './named-statements.js'
import { Parameters } from './sql-parameters.js'
import type { OwnerFilter } from './types.js'

/**
 * The two statements every listing page runs, written as SQL text. Building them with Kysely
 * (operation nodes, frozen copies, the camel-case transform, compilation) cost as much CPU as
 * SQLite spent running them; text is built in a few string joins. Rows still pass through
 * Kysely's plugins on the way back, so they arrive camel-cased like any other query's.
 */

export interface ListingCount {
  scope: string
  category: string
  /** '' for files without an extension. */
  ext: string
  n: string | number
  changes: string | number
}

/**
 * The `file_counts` rows of some scopes and categories: per scope, category and extension,
 * files (`n`) and their `changes`. Every extension is counted, not only the listed ones, so the
 * caller also learns which categories hold nothing but listed extensions and need no extension
 * filter. The rows are read off the primary key and summed by the caller: a `group by` here
 * made SQLite build a temporary B-tree on every page.
 */
export function countsQuery(
  postgres: boolean,
  scopes: readonly string[],
  categories: readonly Category[],
): CompiledQuery<ListingCount> {
  const p = new Parameters(postgres)
  return named(
    CompiledQuery.raw(countsText(p, scopes, categories), p.values) as CompiledQuery<ListingCount>,
  )
}

function countsText(
  p: Parameters,
  scopes: readonly string[],
  categories: readonly Category[],
): string {
  return (
    `select "scope", "category", "ext", "n", "changes" from "file_counts" ` +
    `where "scope" in (${p.list(scopes)}) and "category" in (${p.list(categories)})`
  )
}

/** (created_at, id) of a row: pages continue from here, this row included. */
export interface Anchor {
  createdAt: number
  id: number
}

/** One category of a page, and whether its rows must be filtered by extension. */
export interface Leg {
  category: Category
  byExt: boolean
}

/** What a listing shows of a file, and its (created_at, id) to page from. */
export interface ListedRow {
  id: number | string
  key: StorageKey
  originalName: string | null
  createdAt: number | string
}

/**
 * Up to `limit` rows from `anchor` on (absent: from the newest), newest first: one range of the
 * `(owner, category, created_at, id)` or `(category, created_at, id, …)` index per leg, merged.
 */
export function pageQuery(
  postgres: boolean,
  owners: OwnerFilter | undefined,
  legs: readonly Leg[],
  exts: readonly string[],
  anchor: Anchor | undefined,
  limit: number,
): CompiledQuery<ListedRow> {
  const p = new Parameters(postgres)
  const text = pageText(p, owners, legs, exts, anchor, limit)
  return named(CompiledQuery.raw(text, p.values) as CompiledQuery<ListedRow>)
}

/** The counts (as `countsQuery`'s rows) and a page (as `pageQuery`'s) read by one statement. */
export interface CountedPage {
  counts: ListingCount[]
  rows: ListedRow[]
}

/**
 * PostgreSQL only: `countsQuery` and `pageQuery` as one statement, so one snapshot and one
 * round trip. The page cannot wait for the counts to pick its legs, so every category is a leg
 * and every leg filters by extension when extensions are listed: a category without matching
 * files is an empty index range, and a filter that drops nothing changes no plan, since the
 * covering index that leads with the category is the only one that serves the order.
 */
export function countedPageQuery(
  scopes: readonly string[],
  owners: OwnerFilter | undefined,
  categories: readonly Category[],
  exts: readonly string[],
  anchor: Anchor | undefined,
  limit: number,
): CompiledQuery<CountedPage> {
  const p = new Parameters(true)
  const legs = categories.map((category) => ({ category, byExt: true }))
  const text =
    `select (select coalesce(json_agg("c"), '[]') from (${countsText(p, scopes, categories)}) as "c") as "counts", ` +
    `(select coalesce(json_agg("r" order by "r"."createdAt" desc, "r"."id" desc), '[]') ` +
    `from (${pageText(p, owners, legs, exts, anchor, limit)}) as "r") as "rows"`
  return named(CompiledQuery.raw(text, p.values) as CompiledQuery<CountedPage>)
}

function pageText(
  p: Parameters,
  owners: OwnerFilter | undefined,
  legs: readonly Leg[],
  exts: readonly string[],
  anchor: Anchor | undefined,
  limit: number,
): string {
  const leg = ({ category, byExt }: Leg) =>
    `select "id", "key", "original_name" as "originalName", "created_at" as "createdAt" ` +
    `from "files" where ${ownerCondition(owners, p)}"category" = ${p.one(category)}` +
    (byExt && exts.length > 0 ? ` and "ext" in (${p.list(exts)})` : '') +
    (anchor
      ? ` and ("created_at", "id") <= (${p.one(anchor.createdAt)}, ${p.one(anchor.id)})`
      : '') +
    ` order by "created_at" desc, "id" desc limit ${p.rows(limit)}`
  return legs.length === 1
    ? leg(legs[0] as Leg)
    : legs.map((l, i) => `select * from (${leg(l)}) as "c${i}"`).join(' union all ') +
        ` order by "createdAt" desc, "id" desc limit ${p.rows(limit)}`
}

export interface DayCount {
  day: number | string
  n: number | string
}

/**
 * How many matching files each day of `created_at` holds (`file_day_counts`), one row per day,
 * newest day first or (`fromOldest`) oldest first. Owned files are every file minus the `-`
 * scope, as in `file_counts`.
 */
export function dayCountsQuery(
  postgres: boolean,
  scopes: readonly string[],
  categories: readonly Category[],
  exts: readonly string[],
  fromOldest: boolean,
): CompiledQuery<DayCount> {
  const p = new Parameters(postgres)
  const text =
    `select "day", sum(case when "scope" = ${p.one('-')} then -"n" else "n" end) as "n" ` +
    `from "file_day_counts" where "scope" in (${p.list(scopes)}) ` +
    `and "category" in (${p.list(categories)})` +
    (exts.length > 0 ? ` and "ext" in (${p.list(exts)})` : '') +
    ` group by "day" order by "day" ${fromOldest ? 'asc' : 'desc'}`
  return named(CompiledQuery.raw(text, p.values) as CompiledQuery<DayCount>)
}

/** Where a walk starts: newest first, before `until`; oldest first, from `from` (inclusive). */
export interface WalkStart {
  from?: number | undefined
  until?: number | undefined
}

/**
 * The (created_at, id) of the `offset`-th matching row, newest first or (`fromOldest`) oldest
 * first, counted from `start`'s bound of `created_at` when given. On SQLite the `+` keeps the
 * category and extension filters off the indexes, so the walk runs along a covering
 * `(created_at, id, …)` or `(owner, created_at, id, …)` index (one category:
 * `(category, created_at, id, …)`) without touching the table.
 */
export function rowAtQuery(
  postgres: boolean,
  owners: OwnerFilter | undefined,
  categories: readonly Category[],
  exts: readonly string[],
  offset: number,
  fromOldest: boolean,
  start: WalkStart = {},
): CompiledQuery<Anchor> {
  // Parameters are numbered in the order they are added, so the text is built left to right.
  const p = new Parameters(postgres)
  const steer = postgres ? '' : '+'
  const direction = fromOldest ? 'asc' : 'desc'
  const owner = ownerCondition(owners, p)
  const category =
    categories.length === 1
      ? `"category" = ${p.one(categories[0])}`
      : `${steer}"category" in (${p.list(categories)})`
  const bound = fromOldest ? start.from : start.until
  const text =
    `select "created_at" as "createdAt", "id" from "files" where ${owner}${category}` +
    (exts.length > 0 ? ` and ${steer}"ext" in (${p.list(exts)})` : '') +
    (bound === undefined ? '' : ` and "created_at" ${fromOldest ? '>=' : '<'} ${p.one(bound)}`) +
    ` order by "created_at" ${direction}, "id" ${direction} limit 1 offset ${p.rows(offset)}`
  return named(CompiledQuery.raw(text, p.values) as CompiledQuery<Anchor>)
}

/**
 * The listing of one document's files: not the counted fast path, but a join on the
 * document's references, which are few (an article's images), so count and page are cheap.
 */
export function documentCountQuery(
  postgres: boolean,
  owners: OwnerFilter | undefined,
  document: string,
  categories: readonly Category[],
  exts: readonly string[],
): CompiledQuery<{ n: number | string }> {
  const p = new Parameters(postgres)
  const text = `select count(*) as "n" ${documentRows(p, owners, document, categories, exts)}`
  return named(CompiledQuery.raw(text, p.values) as CompiledQuery<{ n: number | string }>)
}

export function documentPageQuery(
  postgres: boolean,
  owners: OwnerFilter | undefined,
  document: string,
  categories: readonly Category[],
  exts: readonly string[],
  start: number,
  size: number,
): CompiledQuery<ListedRow> {
  const p = new Parameters(postgres)
  const text =
    `select "files"."id", "key", "original_name" as "originalName", "created_at" as "createdAt" ` +
    documentRows(p, owners, document, categories, exts) +
    ` order by "created_at" desc, "files"."id" desc limit ${p.rows(size)} offset ${p.rows(start)}`
  return named(CompiledQuery.raw(text, p.values) as CompiledQuery<ListedRow>)
}

function documentRows(
  p: Parameters,
  owners: OwnerFilter | undefined,
  document: string,
  categories: readonly Category[],
  exts: readonly string[],
): string {
  return (
    `from "files" inner join "document_files" on "document_files"."file_id" = "files"."id" ` +
    `where ${ownerCondition(owners, p)}"document_files"."document_id" = ${p.one(document)} ` +
    `and "category" in (${p.list(categories)})` +
    (exts.length > 0 ? ` and "ext" in (${p.list(exts)})` : '')
  )
}

function ownerCondition(owners: OwnerFilter | undefined, p: Parameters): string {
  if (owners?.kind === 'user') return `"owner" = ${p.one(owners.user)} and `
  if (owners?.kind === 'owned') return `"owner" is not null and `
  return ''
}
