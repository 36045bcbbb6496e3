import type { OwnerFilter } from '../../db/types.js'
import { UeError } from '../../shared/errors.js'
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
  const document = documentFilter(ctx.url.searchParams)
  const page = await ctx.deps.files.list({
    owners: ownersFor(ctx),
    categories: rule.categories,
    exts: rule.allowFiles,
    ...(document === undefined ? {} : { document }),
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

/**
 * `document=<id>`: only the files that document references (docs/documents.md). Absent: the
 * whole listing; repeated or not a document id: refused.
 */
function documentFilter(params: URLSearchParams): string | undefined {
  const values = params.getAll('document')
  if (values.length === 0) return undefined
  const id = values[0] as string
  if (values.length > 1 || id.length === 0 || [...id].length > 200 || /\p{Cc}/u.test(id))
    throw new UeError('UE_VALIDATION_FAILED', { detail: 'document: one id of 1-200 characters' })
  return id
}

const START = /^-?\d{1,15}$/
const SIZE = /^-?\d{1,6}$/

function singleInteger(params: URLSearchParams, name: string, digits: RegExp): number | null {
  const values = params.getAll(name)
  if (values.length !== 1) return null
  const value = (values[0] ?? '').trim()
  return digits.test(value) ? Number(value) : null
}
