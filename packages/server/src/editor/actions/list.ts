import type { OwnerFilter } from '../../db/types.js'
import type { ListRule } from '../action-table.js'
import type { ActionContext } from '../deps.js'
import { type ListEntry, listEntry } from '../results.js'

export interface ListResult {
  state: 'SUCCESS'
  list: ListEntry[]
  start: number
  total: number
}

const MAX_LIST_SIZE = 100

/**
 * listImage / listFile from the index: newest first. `start` that is absent, negative,
 * non-numeric, repeated or `NaN` (the client sends `NaN` after a bad answer) counts as 0;
 * `size` defaults to the configured list size and is clamped to [1, 100]. The answer echoes
 * the `start` actually used, since the client computes the next offset from it.
 */
export async function handleList(ctx: ActionContext, rule: ListRule): Promise<ListResult> {
  const start = Math.max(singleInteger(ctx.url.searchParams, 'start', START) ?? 0, 0)
  const size = Math.min(
    Math.max(singleInteger(ctx.url.searchParams, 'size', SIZE) ?? rule.listSize, 1),
    MAX_LIST_SIZE,
  )
  const page = await ctx.deps.files.list({
    owners: ownersFor(ctx),
    categories: rule.categories,
    exts: rule.allowFiles,
    start,
    size,
  })
  return {
    state: 'SUCCESS',
    list: page.items.map((e) => listEntry(ctx.deps.config.publicUrl, e)),
    start,
    total: page.total,
  }
}

/**
 * Admins and mode none (nobody signed in) see every row; with a shared library every signed-in
 * user sees every owned file; otherwise a user sees their own. Never a client-chosen owner.
 */
function ownersFor(ctx: ActionContext): OwnerFilter {
  const { actor } = ctx
  if (actor.admin || actor.user === null) return { kind: 'all' }
  if (ctx.deps.config.auth.sharedLibrary) return { kind: 'owned' }
  return { kind: 'user', user: actor.user }
}

const START = /^-?\d{1,15}$/
const SIZE = /^-?\d{1,6}$/

function singleInteger(params: URLSearchParams, name: string, digits: RegExp): number | null {
  const values = params.getAll(name)
  if (values.length !== 1) return null
  const value = (values[0] ?? '').trim()
  return digits.test(value) ? Number(value) : null
}
