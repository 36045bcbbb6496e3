import type { z } from 'zod'

interface Def {
  type: string
  shape?: Record<string, z.ZodType>
  innerType?: z.ZodType
  in?: z.ZodType
  options?: z.ZodType[]
  element?: z.ZodType
  valueType?: z.ZodType
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def

/**
 * The keys an object at `path` of `schema` accepts (every member's, for a union), so a refused
 * unknown key can be answered with the nearest real one.
 */
export function knownKeysAt(schema: z.ZodType, path: readonly (string | number)[]): string[] {
  const keys = new Set<string>()
  for (const node of objectsAt(schema, path))
    for (const key of Object.keys(defOf(node).shape ?? {})) keys.add(key)
  return [...keys]
}

function objectsAt(schema: z.ZodType, path: readonly (string | number)[]): z.ZodType[] {
  const def = defOf(schema)
  if (def.innerType) return objectsAt(def.innerType, path)
  if (def.type === 'pipe' && def.in) return objectsAt(def.in, path)
  if (def.options) return def.options.flatMap((o) => objectsAt(o, path))
  if (path.length === 0) return def.type === 'object' ? [schema] : []
  const [head, ...rest] = path
  if (def.type === 'object') {
    const child = def.shape?.[String(head)]
    return child ? objectsAt(child, rest) : []
  }
  const inner = def.element ?? def.valueType
  return inner ? objectsAt(inner, rest) : []
}
