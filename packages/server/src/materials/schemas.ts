import * as z from '#zod'
import { MAX_ID } from '../db/material-repo.js'
import { UeError } from '../shared/errors.js'
import { isSafeThumbnail } from './sanitize.js'

const MAX_PAGE_SIZE = 100
const DEFAULT_PAGE_SIZE = 20
/** Far past any real catalogue; keeps the SQL offset a small integer. */
const MAX_PAGE = 1_000_000
const MAX_KEYWORD = 100

const CONTROL = /\p{Cc}/u
/** An integer from `min` to `max`. */
const int = (min: number, max: number) => z.number().check(z.int(), z.minimum(min), z.maximum(max))
const text = (max: number) =>
  z.string().check(
    z.trim(),
    z.minLength(1),
    z.maxLength(max),
    z.refine((v) => !CONTROL.test(v), 'must not contain control characters'),
  )

const id = int(1, MAX_ID)
/** A category reference in a write: `null` or `0` mean none (top level, uncategorised). */
const categoryRef = z.pipe(
  z.union([id, z.literal(0), z.null()], { error: 'must be a category id, or null' }),
  z.transform((v) => (v === 0 ? null : v)),
)
const order = int(-1_000_000, 1_000_000)

const CATEGORY_FIELDS = {
  name: text(100),
  parentId: z._default(categoryRef, null),
  order: z._default(order, 0),
}

/** `POST /admin/categories`, `PUT /admin/categories/:id`. */
export const CategoryWriteSchema = z.strictObject(CATEGORY_FIELDS)
/** `PATCH /admin/categories/:id`: only the fields given change. */
export const CategoryPatchSchema = z.strictObject({
  name: z.optional(CATEGORY_FIELDS.name),
  parentId: z.optional(categoryRef),
  order: z.optional(order),
})
export type CategoryWrite = z.output<typeof CategoryWriteSchema>
export type CategoryPatch = z.output<typeof CategoryPatchSchema>

/** Names the public item already uses; a custom field may not shadow them. */
const RESERVED_FIELDS = new Set([
  'id',
  'name',
  'content',
  'categoryId',
  'thumbnail',
  'tags',
  'createdAt',
  'updatedAt',
  // the designer's own names, which the loaders produce from the fields above
  'title',
  'html',
  'cover',
])
const MAX_CUSTOM_DEPTH = 8

const thumbnail = z
  .pipe(
    z.union([z.string().check(z.trim()), z.null()]),
    z.transform((v) => (v === '' ? null : v)),
  )
  .check(
    z.refine((v) => v === null || isSafeThumbnail(v), 'must be an http(s) URL or a relative path'),
  )

const tags = z.pipe(
  z.array(text(50)).check(z.maxLength(30)),
  z.transform((list) => [...new Set(list)]),
)

const custom = z.record(z.string().check(z.minLength(1), z.maxLength(64)), z.unknown()).check(
  z.superRefine((fields, ctx) => {
    const keys = Object.keys(fields)
    if (keys.length > 50) ctx.addIssue({ code: 'custom', message: 'at most 50 custom fields' })
    for (const key of keys)
      if (RESERVED_FIELDS.has(key))
        ctx.addIssue({ code: 'custom', path: [key], message: 'is a reserved field name' })
    if (depthOf(fields) > MAX_CUSTOM_DEPTH)
      ctx.addIssue({ code: 'custom', message: `nested deeper than ${MAX_CUSTOM_DEPTH}` })
  }),
)

const MATERIAL_FIELDS = {
  name: text(200),
  content: z.string().check(z.maxLength(500_000)),
  categoryId: z._default(categoryRef, null),
  thumbnail: z._default(thumbnail, null),
  tags: z._default(tags, []),
  custom: z._default(custom, {}),
}

/** `POST /admin/materials`, `PUT /admin/materials/:id`. */
export const MaterialWriteSchema = z.strictObject(MATERIAL_FIELDS)
/** `PATCH /admin/materials/:id`: only the fields given change (`tags` and `custom` as a whole). */
export const MaterialPatchSchema = z.strictObject({
  name: z.optional(MATERIAL_FIELDS.name),
  content: z.optional(MATERIAL_FIELDS.content),
  categoryId: z.optional(categoryRef),
  thumbnail: z.optional(thumbnail),
  tags: z.optional(tags),
  custom: z.optional(custom),
})
export type MaterialWrite = z.output<typeof MaterialWriteSchema>
export type MaterialPatch = z.output<typeof MaterialPatchSchema>

const pageNumber = z.optional(
  z.union(
    [z.number(), z.pipe(z.string().check(z.regex(/^\d{1,16}$/)), z.transform(Number)), z.null()],
    {
      error: 'must be a finite number',
    },
  ),
)
const keyword = z.optional(
  z.nullable(
    z.string().check(
      z.maxLength(MAX_KEYWORD),
      z.refine((v) => !CONTROL.test(v), 'must not contain control characters'),
    ),
  ),
)

/**
 * The body of `POST /materials` (docs/materials.md, Read API). `categoryId` `0`, `''`, `null` or absent means all;
 * `keywords` (the designer's own name) is read when `keyword` is absent; `page` defaults to 1,
 * `pageSize` to 20 and is clamped to [1, 100]. Unknown keys are ignored.
 */
export const SearchSchema = z.pipe(
  z.object({
    categoryId: z.optional(
      z.union(
        [
          int(0, MAX_ID),
          z
            .pipe(
              z.string().check(z.regex(/^\d{0,10}$/, 'must be a category id')),
              z.transform((v) => (v === '' ? 0 : Number(v))),
            )
            .check(z.refine((v) => v <= MAX_ID, 'must be a category id')),
          z.null(),
        ],
        { error: 'must be a category id, or 0 for all' },
      ),
    ),
    keyword,
    keywords: keyword,
    page: pageNumber,
    pageSize: pageNumber,
  }),
  z.transform((q) => ({
    categoryId: q.categoryId ? q.categoryId : null,
    keyword: (q.keyword ?? q.keywords ?? '').trim(),
    page: clamp(q.page ?? 1, 1, MAX_PAGE),
    pageSize: clamp(q.pageSize ?? DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE),
  })),
)
export type SearchQuery = z.output<typeof SearchSchema>

const timestamp = z.pipe(
  z.iso.datetime({ offset: true }),
  z.transform((v) => Date.parse(v)),
)
const withIdentity = { id, createdAt: z.optional(timestamp), updatedAt: z.optional(timestamp) }

/** The JSON file of `ueditor-server materials import` (and what `export` writes). */
export const TransferSchema = z.strictObject({
  version: z.optional(z.literal(1)),
  exportedAt: z.optional(z.string()),
  categories: z._default(z.array(z.strictObject({ ...CATEGORY_FIELDS, ...withIdentity })), []),
  materials: z._default(z.array(z.strictObject({ ...MATERIAL_FIELDS, ...withIdentity })), []),
})

/** Parses or throws UE_VALIDATION_FAILED listing the problems by path. */
export function parseWith<S extends z.ZodMiniType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value)
  if (result.success) return result.data
  const issues = result.error.issues.slice(0, 10).map((issue) => {
    const path = issue.path.map(String).join('.')
    const line = path ? `${path}: ${issue.message}` : issue.message
    return line.length > 200 ? `${line.slice(0, 200)}…` : line
  })
  const more = result.error.issues.length > 10 ? '; …' : ''
  throw new UeError('UE_VALIDATION_FAILED', { detail: issues.join('; ') + more })
}

function clamp(n: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.floor(n)))
}

function depthOf(value: unknown, depth = 0): number {
  if (depth > MAX_CUSTOM_DEPTH || typeof value !== 'object' || value === null) return depth
  let max = depth + 1
  for (const v of Object.values(value)) max = Math.max(max, depthOf(v, depth + 1))
  return max
}
