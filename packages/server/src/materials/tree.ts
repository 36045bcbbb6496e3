import type { CategoryRecord } from '../db/material-repo.js'

/** A category as `GET /categories` answers it (docs/materials.md, Read API). */
export interface CategoryNode {
  id: number
  name: string
  parentId: number | null
  order: number
  children: CategoryNode[]
}

/** The designer renders two levels; deeper ones are kept, but not without end. */
export const MAX_CATEGORY_DEPTH = 8

/**
 * Folds a flat list into a tree. The list order (order, id) is kept at every level; a category
 * whose parent is missing is shown at the top.
 */
export function buildTree(flat: readonly CategoryRecord[]): CategoryNode[] {
  const nodes = new Map<number, CategoryNode>()
  for (const c of flat)
    nodes.set(c.id, { id: c.id, name: c.name, parentId: c.parentId, order: c.order, children: [] })
  const roots: CategoryNode[] = []
  for (const node of nodes.values()) {
    const parent = node.parentId === null ? undefined : nodes.get(node.parentId)
    if (parent && parent !== node) parent.children.push(node)
    else roots.push(node)
  }
  return roots
}

/** The category and everything below it. */
export function subtreeIds(flat: readonly CategoryRecord[], id: number): number[] {
  const children = childrenIndex(flat)
  const seen = new Set<number>([id])
  const queue = [id]
  for (let next = queue.shift(); next !== undefined; next = queue.shift())
    for (const child of children.get(next) ?? [])
      if (!seen.has(child)) {
        seen.add(child)
        queue.push(child)
      }
  return [...seen]
}

/** 1 for a top-level category; the walk up stops at a missing parent or a loop. */
export function depthOf(flat: readonly CategoryRecord[], id: number): number {
  return walkUp(parentsIndex(flat), id)
}

/** The depth of every category, as `depthOf` gives it, from one index. */
export function depths(flat: readonly CategoryRecord[]): Map<number, number> {
  const parents = parentsIndex(flat)
  return new Map(flat.map((c) => [c.id, walkUp(parents, c.id)]))
}

function walkUp(parents: ReadonlyMap<number, number | null>, id: number): number {
  const seen = new Set<number>()
  for (let at: number | null | undefined = id; at != null && !seen.has(at); at = parents.get(at))
    seen.add(at)
  return seen.size
}

function parentsIndex(flat: readonly CategoryRecord[]): Map<number, number | null> {
  return new Map(flat.map((c) => [c.id, c.parentId]))
}

/** Levels in the subtree of `id`, itself included (1 for a leaf). */
export function heightOf(flat: readonly CategoryRecord[], id: number): number {
  const children = childrenIndex(flat)
  let height = 0
  let level = [id]
  const seen = new Set<number>(level)
  while (level.length > 0) {
    height++
    level = level.flatMap((at) => children.get(at) ?? []).filter((c) => !seen.has(c))
    for (const c of level) seen.add(c)
  }
  return height
}

function childrenIndex(flat: readonly CategoryRecord[]): Map<number, number[]> {
  const index = new Map<number, number[]>()
  for (const c of flat) {
    if (c.parentId === null) continue
    const list = index.get(c.parentId)
    if (list) list.push(c.id)
    else index.set(c.parentId, [c.id])
  }
  return index
}
