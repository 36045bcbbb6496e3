import { closest } from './suggest.js'

const PREFIX = 'UEDITOR_'

export interface UnknownEnvVar {
  name: string
  /** The known variable it most likely meant. */
  suggestion?: string
  /**
   * True for a likely typo of one of ours (a suggestion) and for anything under `UEDITOR_AUTH`:
   * ignoring it could leave a limit or the authentication off without a word, so the start is
   * refused. A name unlike any of ours (another tool's variable) is only warned about.
   */
  refused: boolean
  message: string
}

/** `UEDITOR_*` variables in `env` that are not in `known`, with the nearest known name. */
export function unknownEnvVars(env: NodeJS.ProcessEnv, known: readonly string[]): UnknownEnvVar[] {
  const ours = known.filter((k) => k.startsWith(PREFIX))
  const knownSet = new Set(known)
  const out: UnknownEnvVar[] = []
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith(PREFIX) || knownSet.has(name) || env[name] === undefined) continue
    const suggestion = nearestKnown(name.slice(PREFIX.length), ours, known)
    const refused = suggestion !== undefined || name.startsWith(`${PREFIX}AUTH`)
    const hint = suggestion ? ` (did you mean ${suggestion}?)` : ''
    out.push({
      name,
      ...(suggestion ? { suggestion } : {}),
      refused,
      message: refused
        ? `unknown variable ${name}${hint}: the server does not read it, so what it was meant to set is not in force; rename it, or unset it`
        : `unknown variable ${name}: the server does not read it (ueditor-server --help lists every variable)`,
    })
  }
  return out
}

/** The known variable `suffix` (a name without `UEDITOR_`) most likely meant, if any. */
function nearestKnown(
  suffix: string,
  ours: readonly string[],
  known: readonly string[],
): string | undefined {
  // `UEDITOR_PORT` for `PORT`: the variables without the prefix, named with it by mistake.
  const bare = known.find((k) => !k.startsWith(PREFIX) && k === suffix)
  if (bare) return bare
  // Compared without the shared prefix, so eight equal letters do not make any name "close".
  const near = closest(
    suffix,
    ours.map((k) => k.slice(PREFIX.length)),
  )
  if (near !== undefined) return `${PREFIX}${near}`
  // `UEDITOR_JWT_SECRET` for `UEDITOR_AUTH_JWT_SECRET`: a known name's tail, when only one has it.
  const tails = ours.filter((k) => k.endsWith(`_${suffix}`))
  return tails.length === 1 ? tails[0] : undefined
}
