import type { CategoryRecord, MaterialInput, MaterialRepository } from '../db/material-repo.js'
import { UeError } from '../shared/errors.js'
import { parseWith, TransferSchema } from './schemas.js'
import {
  type CategoryView,
  categoryView,
  cleanMaterial,
  type MaterialView,
  materialView,
} from './service.js'
import { depths, MAX_CATEGORY_DEPTH } from './tree.js'

/** What `export` writes and `import` reads. */
export interface TransferDocument {
  version: 1
  exportedAt: string
  categories: CategoryView[]
  materials: MaterialView[]
}

export interface TransferCounts {
  created: number
  updated: number
  unchanged: number
}

export interface ImportSummary {
  categories: TransferCounts
  materials: TransferCounts
}

/** Everything, by id, read in one transaction. */
export async function exportMaterials(repo: MaterialRepository): Promise<TransferDocument> {
  const [categories, materials] = await repo.transaction(async (tx) => [
    await tx.categories(),
    await tx.allMaterials(),
  ])
  return {
    version: 1,
    exportedAt: new Date().toISOString(),
    categories: [...categories].sort((a, b) => a.id - b.id).map(categoryView),
    materials: materials.map(materialView),
  }
}

/**
 * Upserts by id, categories first (parents before children), then materials, in one
 * transaction after the whole document has been validated with the schemas of the admin routes.
 * Importing the same document again changes nothing. Material HTML is sanitised as on any write,
 * unless the caller vouches for it (`alreadyClean`: the demo materials, which a test keeps in
 * the sanitiser's output form).
 */
export async function importMaterials(
  repo: MaterialRepository,
  input: unknown,
  o: { alreadyClean?: boolean } = {},
): Promise<ImportSummary> {
  const doc = parseWith(TransferSchema, input)
  refuseDuplicates('categories', doc.categories)
  refuseDuplicates('materials', doc.materials)

  return repo.transaction(async (tx) => {
    const existing = new Map((await tx.categories()).map((c) => [c.id, c]))
    const merged = new Map(existing)
    for (const c of doc.categories)
      merged.set(c.id, { ...c, createdAt: c.createdAt ?? 0, updatedAt: c.updatedAt ?? 0 })
    const flat = [...merged.values()]
    doc.categories.forEach((c, i) => {
      refuseLoops(merged, c.id, `categories.${i}`)
    })
    const depth = depths(flat)
    const levelOf = (id: number) => depth.get(id) ?? 0
    const tooDeep = flat.find((c) => levelOf(c.id) > MAX_CATEGORY_DEPTH)
    if (tooDeep)
      throw invalid(
        `categories: category ${tooDeep.id} would sit deeper than ${MAX_CATEGORY_DEPTH} levels`,
      )
    doc.materials.forEach((m, i) => {
      if (m.categoryId !== null && !merged.has(m.categoryId))
        throw invalid(`materials.${i}.categoryId: category ${m.categoryId} does not exist`)
    })

    const summary: ImportSummary = { categories: counts(), materials: counts() }
    // One batch per level, parents first: a batch may be more than one statement.
    const byLevel: (typeof doc.categories)[] = []
    for (const c of doc.categories) {
      const before = existing.get(c.id)
      if (unchanged(before, c, CATEGORY_FIELDS)) summary.categories.unchanged++
      else {
        const level = levelOf(c.id)
        const batch = byLevel[level]
        if (batch) batch.push(c)
        else byLevel[level] = [c]
        summary.categories[before ? 'updated' : 'created']++
      }
    }
    for (const level of byLevel) if (level) await tx.saveCategories(level)

    const stored = await tx.getMaterials(doc.materials.map((m) => m.id))
    const before = new Map(stored.map((m) => [m.id, m]))
    const changed: MaterialInput[] = []
    for (const m of doc.materials) {
      const clean = o.alreadyClean ? m : cleanMaterial(m)
      const was = before.get(m.id) ?? null
      if (unchanged(was, clean, MATERIAL_FIELDS)) summary.materials.unchanged++
      else {
        changed.push(clean)
        summary.materials[was ? 'updated' : 'created']++
      }
    }
    await tx.saveMaterials(changed)
    return summary
  })
}

function refuseLoops(merged: ReadonlyMap<number, CategoryRecord>, id: number, where: string) {
  const seen = new Set<number>()
  for (let at: number | null = id; at !== null; at = merged.get(at)?.parentId ?? null) {
    if (seen.has(at)) throw invalid(`${where}.parentId: categories form a loop`)
    if (!merged.has(at)) throw invalid(`${where}.parentId: category ${at} does not exist`)
    seen.add(at)
  }
}

function refuseDuplicates(kind: string, list: readonly { id: number }[]): void {
  const seen = new Set<number>()
  list.forEach((item, i) => {
    if (seen.has(item.id)) throw invalid(`${kind}.${i}.id: ${item.id} appears more than once`)
    seen.add(item.id)
  })
}

const CATEGORY_FIELDS = ['name', 'parentId', 'order'] as const
const MATERIAL_FIELDS = ['name', 'content', 'categoryId', 'thumbnail', 'tags', 'custom'] as const

type Stamped = { createdAt: number; updatedAt: number }

/**
 * The stored row already holds what the file says: the same fields, and each time either
 * absent from the file (meaning "keep" for createdAt, "now if anything changed" for updatedAt)
 * or equal.
 */
function unchanged<R extends Stamped, K extends keyof R>(
  stored: R | null | undefined,
  given: Pick<R, K> & Partial<Stamped>,
  fields: readonly K[],
): boolean {
  if (stored === null || stored === undefined) return false
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)
  return (
    fields.every((k) => same(stored[k], given[k])) &&
    (given.createdAt === undefined || given.createdAt === stored.createdAt) &&
    (given.updatedAt === undefined || given.updatedAt === stored.updatedAt)
  )
}

function counts(): TransferCounts {
  return { created: 0, updated: 0, unchanged: 0 }
}

function invalid(detail: string): UeError {
  return new UeError('UE_VALIDATION_FAILED', { detail })
}
