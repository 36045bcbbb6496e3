import type {
  Id,
  MaterialCategory,
  MaterialItem,
  ServiceCategory,
  ServiceMaterial,
  StyleListData,
} from './types.js'

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)
const isId = (v: unknown): v is Id => typeof v === 'number' || typeof v === 'string'

function mapCategory(c: ServiceCategory): MaterialCategory {
  const out: MaterialCategory = { id: c.id, title: String(c.name ?? '') }
  if (isId(c.parentId)) out.pid = c.parentId
  if (typeof c.order === 'number') out.sort = c.order
  out._child = Array.isArray(c.children) ? mapCategories(c.children) : []
  return out
}

/**
 * `name → title`, `parentId → pid`, `order → sort`, `children → _child`, recursively. A flat
 * list whose items name their parent by `parentId` is folded into a tree through `_child`.
 */
export function mapCategories(input: unknown): MaterialCategory[] {
  if (!Array.isArray(input)) return []
  const valid = input.filter((c): c is ServiceCategory => isObject(c) && isId(c.id))
  const mapped = valid.map(mapCategory)
  const byId = new Map<Id, MaterialCategory>(mapped.map((c) => [c.id, c]))
  const roots: MaterialCategory[] = []
  for (const category of mapped) {
    const parent = category.pid !== undefined ? byId.get(category.pid) : undefined
    if (parent && parent !== category) parent._child?.push(category)
    else roots.push(category)
  }
  return roots
}

function mapMaterial(m: ServiceMaterial): MaterialItem {
  const { name, content, thumbnail, ...custom } = m
  const item: MaterialItem = {
    ...custom,
    id: m.id,
    title: String(name ?? ''),
    html: String(content ?? ''),
  }
  if (thumbnail !== undefined && thumbnail !== null) item.cover = String(thumbnail)
  return item
}

/** `items → records`, `name → title`, `content → html`, `thumbnail → cover`; extras kept. */
export function mapMaterialPage(
  input: unknown,
  requested: { page: number; pageSize: number },
): StyleListData {
  if (!isObject(input) || !Array.isArray(input.items)) throw new TypeError('not a materials page')
  const records = input.items
    .filter((m): m is ServiceMaterial => isObject(m) && isId(m.id))
    .map(mapMaterial)
  const total = Number(input.total)
  return {
    records,
    total: Number.isFinite(total) && total >= 0 ? total : records.length,
    page: positive(input.page) ?? requested.page,
    pageSize: positive(input.pageSize) ?? requested.pageSize,
  }
}

function positive(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined
}
