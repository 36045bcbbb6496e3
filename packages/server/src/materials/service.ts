import type { CategoryRecord, MaterialRecord, MaterialRepository } from '../db/material-repo.js'
import { UeError } from '../shared/errors.js'
import { sanitizeMaterialHtml } from './sanitize.js'
import type {
  CategoryPatch,
  CategoryWrite,
  MaterialPatch,
  MaterialWrite,
  SearchQuery,
} from './schemas.js'
import {
  buildTree,
  type CategoryNode,
  depthOf,
  heightOf,
  MAX_CATEGORY_DEPTH,
  subtreeIds,
} from './tree.js'

/** A record with its times as ISO 8601 strings, as the admin routes and the export show it. */
type WithIsoTimes<T> = Omit<T, 'createdAt' | 'updatedAt'> & { createdAt: string; updatedAt: string }
export type CategoryView = WithIsoTimes<CategoryRecord>
export type MaterialView = WithIsoTimes<MaterialRecord>

/** `{items, total, page, pageSize}` (docs/materials.md, Read API), with the paging values actually used. */
export interface MaterialPage {
  items: Record<string, unknown>[]
  total: number
  page: number
  pageSize: number
}

/** How to delete a category that still has children or materials. */
export type DeleteMode =
  | { kind: 'refuse' }
  | { kind: 'cascade' }
  | { kind: 'move'; to: number | null }

export interface DeleteSummary {
  deleted: { categories: number; materials: number }
  moved: { categories: number; materials: number }
}

export type MaterialsService = ReturnType<typeof createMaterialsService>

/** The rules of the materials service; the repository only keeps rows. */
export function createMaterialsService(repo: MaterialRepository) {
  return {
    async categoryTree(): Promise<CategoryNode[]> {
      return buildTree(await repo.categories())
    },

    /** A category includes its descendants; an unknown category matches nothing. */
    async search(q: SearchQuery): Promise<MaterialPage> {
      const { page, pageSize } = q
      let categoryIds: number[] | undefined
      if (q.categoryId !== null) {
        const flat = await repo.categories()
        categoryIds = flat.some((c) => c.id === q.categoryId) ? subtreeIds(flat, q.categoryId) : []
      }
      const found = await repo.search({ categoryIds, keyword: q.keyword, page, pageSize })
      return { items: found.items.map(toItem), total: found.total, page, pageSize }
    },

    async getCategory(id: number): Promise<CategoryView> {
      return categoryView(found(await repo.getCategory(id), `category ${id}`))
    },

    async createCategory(input: CategoryWrite): Promise<CategoryView> {
      return repo.transaction(async (tx) => {
        checkPlacement(await tx.categories(), undefined, input.parentId)
        return categoryView(await tx.saveCategory(input))
      })
    },

    /** Replaces the category with this id, or creates it with this id. */
    async putCategory(id: number, input: CategoryWrite) {
      return repo.transaction(async (tx) => {
        const flat = await tx.categories()
        checkPlacement(flat, id, input.parentId)
        const saved = await tx.saveCategory({ ...input, id })
        return { view: categoryView(saved), created: !flat.some((c) => c.id === id) }
      })
    },

    async patchCategory(id: number, patch: CategoryPatch): Promise<CategoryView> {
      return repo.transaction(async (tx) => {
        const existing = found(await tx.getCategory(id), `category ${id}`)
        const next = { ...pick(existing, ['name', 'parentId', 'order']), ...defined(patch), id }
        if (patch.parentId !== undefined) checkPlacement(await tx.categories(), id, next.parentId)
        return categoryView(await tx.saveCategory(next))
      })
    },

    /**
     * Refused with UE_CONFLICT while the category has children or materials, unless `cascade`
     * (everything below goes too) or `move` (children and materials go to `to`; null: top level).
     */
    async deleteCategory(id: number, mode: DeleteMode): Promise<DeleteSummary> {
      return repo.transaction(async (tx) => {
        const flat = await tx.categories()
        found(
          flat.find((c) => c.id === id),
          `category ${id}`,
        )
        if (mode.kind === 'cascade') {
          const subtree = subtreeIds(flat, id)
          const materials = await tx.deleteMaterialsIn(subtree)
          const categories = await tx.deleteCategories(subtree)
          return { deleted: { categories, materials }, moved: { categories: 0, materials: 0 } }
        }
        const moved = { categories: 0, materials: 0 }
        if (mode.kind === 'refuse') {
          const children = flat.filter((c) => c.parentId === id).length
          const materials = await tx.countMaterials([id])
          if (children > 0 || materials > 0)
            throw new UeError('UE_CONFLICT', {
              detail: `category ${id} has ${children} subcategories and ${materials} materials; pass cascade=true or moveTo=<id>`,
            })
        } else {
          checkMoveTarget(flat, id, mode.to)
          moved.categories = await tx.moveChildren(id, mode.to)
          moved.materials = await tx.moveMaterials([id], mode.to)
        }
        await tx.deleteCategories([id])
        return { deleted: { categories: 1, materials: 0 }, moved }
      })
    },

    async getMaterial(id: number): Promise<MaterialView> {
      return materialView(found(await repo.getMaterial(id), `material ${id}`))
    },

    async createMaterial(input: MaterialWrite): Promise<MaterialView> {
      return repo.transaction(async (tx) => {
        await checkCategory(tx, input.categoryId)
        return materialView(await tx.saveMaterial(cleanMaterial(input)))
      })
    },

    async putMaterial(id: number, input: MaterialWrite) {
      return repo.transaction(async (tx) => {
        const existing = await tx.getMaterial(id)
        await checkCategory(tx, input.categoryId)
        const saved = await tx.saveMaterial({ ...cleanMaterial(input), id })
        return { view: materialView(saved), created: existing === null }
      })
    },

    async patchMaterial(id: number, patch: MaterialPatch): Promise<MaterialView> {
      return repo.transaction(async (tx) => {
        const existing = found(await tx.getMaterial(id), `material ${id}`)
        const { createdAt: _c, updatedAt: _u, ...kept } = existing
        const next = { ...kept, ...defined(patch) }
        if (patch.categoryId !== undefined) await checkCategory(tx, next.categoryId)
        return materialView(await tx.saveMaterial({ ...cleanMaterial(next), id }))
      })
    },

    async deleteMaterial(id: number): Promise<DeleteSummary> {
      if (!(await repo.deleteMaterial(id)))
        throw new UeError('UE_NOT_FOUND', { detail: `material ${id}` })
      return { deleted: { categories: 0, materials: 1 }, moved: { categories: 0, materials: 0 } }
    },
  }
}

/**
 * Where a category may sit: its parent exists, is not the category or below it, and the tree
 * stays within MAX_CATEGORY_DEPTH levels.
 */
function checkPlacement(
  flat: readonly CategoryRecord[],
  id: number | undefined,
  parentId: number | null,
): void {
  const exists = id !== undefined && flat.some((c) => c.id === id)
  let parentDepth = 0
  if (parentId !== null) {
    if (!flat.some((c) => c.id === parentId))
      throw validation(`parentId: category ${parentId} does not exist`)
    if (
      id !== undefined &&
      (parentId === id || (exists && subtreeIds(flat, id).includes(parentId)))
    )
      throw validation('parentId: a category cannot be placed under itself or its descendants')
    parentDepth = depthOf(flat, parentId)
  }
  const height = exists ? heightOf(flat, id) : 1
  if (parentDepth + height > MAX_CATEGORY_DEPTH)
    throw validation(`parentId: categories nest at most ${MAX_CATEGORY_DEPTH} levels`)
}

/**
 * Where the children of a deleted category may go: an existing category outside its subtree
 * (or the top level, null), with the moved subtrees still within MAX_CATEGORY_DEPTH levels.
 */
function checkMoveTarget(flat: readonly CategoryRecord[], id: number, to: number | null): void {
  if (to !== null) {
    if (!flat.some((c) => c.id === to)) throw validation(`moveTo: category ${to} does not exist`)
    if (subtreeIds(flat, id).includes(to))
      throw validation('moveTo: cannot move into the deleted category or below it')
  }
  const below = heightOf(flat, id) - 1
  const targetDepth = to === null ? 0 : depthOf(flat, to)
  if (targetDepth + below > MAX_CATEGORY_DEPTH)
    throw validation(`moveTo: categories nest at most ${MAX_CATEGORY_DEPTH} levels`)
}

/** The HTML is cleaned on every write, whatever the route. */
export function cleanMaterial<T extends { content: string }>(m: T): T {
  return { ...m, content: sanitizeMaterialHtml(m.content) }
}

/** The public item: custom fields first, so they can never replace the named ones. */
function toItem(m: MaterialRecord): Record<string, unknown> {
  return {
    ...m.custom,
    id: m.id,
    name: m.name,
    content: m.content,
    categoryId: m.categoryId,
    thumbnail: m.thumbnail,
    tags: m.tags,
    createdAt: iso(m.createdAt),
    updatedAt: iso(m.updatedAt),
  }
}

export function categoryView(c: CategoryRecord): CategoryView {
  return { ...c, createdAt: iso(c.createdAt), updatedAt: iso(c.updatedAt) }
}

export function materialView(m: MaterialRecord): MaterialView {
  return { ...m, createdAt: iso(m.createdAt), updatedAt: iso(m.updatedAt) }
}

async function checkCategory(repo: MaterialRepository, id: number | null): Promise<void> {
  if (id !== null && (await repo.getCategory(id)) === null)
    throw validation(`categoryId: category ${id} does not exist`)
}

/** The row, or UE_NOT_FOUND naming `what`. */
function found<T>(row: T | null | undefined, what: string): T {
  if (row === null || row === undefined) throw new UeError('UE_NOT_FOUND', { detail: what })
  return row
}

function validation(detail: string): UeError {
  return new UeError('UE_VALIDATION_FAILED', { detail })
}

function iso(ms: number): string {
  return new Date(ms).toISOString()
}

function pick<T extends object, K extends keyof T>(o: T, keys: readonly K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((k) => [k, o[k]])) as Pick<T, K>
}

/** The keys whose value is not undefined (a PATCH body's fields). */
function defined<T extends object>(o: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as never
}
