import { parseArgs } from 'node:util'

export interface ArgSpec {
  /** Long flags without a value (`--fix`). */
  flags?: readonly string[]
  /** Long options with a value (`--grace 1h`, `--grace=1h`), each with the problem when it has none. */
  values?: Readonly<Record<string, string>>
  /** How many positional arguments are taken; more are refused. */
  positionals?: number
}

export interface Args {
  flags: Set<string>
  values: Map<string, string>
  positionals: string[]
}

/**
 * A command's arguments as `node:util` parseArgs reads them, or the problem to print above its
 * usage: `Unexpected argument "<arg>".` for anything the spec does not name.
 */
export function readArgs(args: readonly string[], spec: ArgSpec): Args | { problem: string } {
  const flags = spec.flags ?? []
  const values = spec.values ?? {}
  const options: Record<string, { type: 'boolean' | 'string' }> = {}
  for (const name of flags) options[name] = { type: 'boolean' }
  for (const name of Object.keys(values)) options[name] = { type: 'string' }
  const { tokens } = parseArgs({
    args: [...args],
    options,
    strict: false,
    allowPositionals: true,
    tokens: true,
  })
  const out: Args = { flags: new Set(), values: new Map(), positionals: [] }
  const unexpected = (index: number) => ({ problem: `Unexpected argument "${args[index]}".` })
  for (const token of tokens) {
    if (token.kind === 'option-terminator') continue
    if (token.kind === 'positional') {
      if (out.positionals.length >= (spec.positionals ?? 0)) return unexpected(token.index)
      out.positionals.push(token.value)
      continue
    }
    const long = token.rawName === `--${token.name}`
    const missing = Object.hasOwn(values, token.name) ? values[token.name] : undefined
    if (long && missing !== undefined) {
      if (token.value === undefined) return { problem: missing }
      out.values.set(token.name, token.value)
    } else if (long && flags.includes(token.name) && token.value === undefined) {
      out.flags.add(token.name)
    } else return unexpected(token.index)
  }
  return out
}

/**
 * `--env-file <file>` or `--env-file=<file>`, wherever it stands before a `--`: the file and the
 * argument positions it took, nothing when absent, or the problem with it.
 */
export function takeEnvFile(
  args: readonly string[],
): { file: string; positions: Set<number> } | { problem: string } | undefined {
  const { tokens } = parseArgs({
    args: [...args],
    options: { 'env-file': { type: 'string' } },
    strict: false,
    allowPositionals: true,
    tokens: true,
  })
  let found: { file: string; positions: Set<number> } | undefined
  for (const token of tokens) {
    if (token.kind !== 'option' || token.rawName !== '--env-file') continue
    if (found) return { problem: '--env-file is given twice.' }
    const file = token.value
    if (!file || file.startsWith('-')) return { problem: '--env-file needs a file.' }
    found = {
      file,
      positions: new Set(token.inlineValue ? [token.index] : [token.index, token.index + 1]),
    }
  }
  return found
}
