import type * as z from '#zod'

export interface Def {
  type: string
  shape?: Record<string, z.ZodMiniType>
  innerType?: z.ZodMiniType
  in?: z.ZodMiniType
  options?: z.ZodMiniType[]
  element?: z.ZodMiniType
  valueType?: z.ZodMiniType
  defaultValue?: unknown
  /** An enum's choices. */
  entries?: Record<string, string | number>
  /** A literal's values. */
  values?: unknown[]
}

export const defOf = (schema: z.ZodMiniType): Def =>
  (schema as unknown as { _zod: { def: Def } })._zod.def

/**
 * The keys an object at `path` of `schema` accepts (every member's, for a union), so a refused
 * unknown key can be answered with the nearest real one.
 */
export function knownKeysAt(schema: z.ZodMiniType, path: readonly (string | number)[]): string[] {
  const keys = new Set<string>()
  for (const node of schemasAt(schema, path).flatMap(membersOf))
    if (defOf(node).type === 'object')
      for (const key of Object.keys(defOf(node).shape ?? {})) keys.add(key)
  return [...keys]
}

/**
 * The schemas that check the value at `path` of `schema`, one per union member it can sit in,
 * as declared there (with their default, optional and pipe still around them).
 */
export function schemasAt(
  schema: z.ZodMiniType,
  path: readonly (string | number)[],
): z.ZodMiniType[] {
  if (path.length === 0) return [schema]
  const [head, ...rest] = path
  return membersOf(schema).flatMap((node) => {
    const def = defOf(node)
    const child = def.type === 'object' ? def.shape?.[String(head)] : (def.element ?? def.valueType)
    return child ? schemasAt(child, rest) : []
  })
}

/** `schema` without its wrappers (default, optional, a pipe's output), one per union member. */
export function membersOf(schema: z.ZodMiniType): z.ZodMiniType[] {
  const def = defOf(schema)
  if (def.innerType) return membersOf(def.innerType)
  if (def.type === 'pipe' && def.in) return membersOf(def.in)
  if (def.options) return def.options.flatMap(membersOf)
  return [schema]
}
