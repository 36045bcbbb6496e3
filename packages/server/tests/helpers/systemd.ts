import { spawnSync } from 'node:child_process'
import { parseEnvFile } from '../../src/standalone/env-file.js'

/** What a service's unit and its drop-ins say about its environment, in the order read. */
export interface EnvironmentSources {
  /** `NAME=value` assignments of `Environment=` lines. */
  environment: string[]
  /** `EnvironmentFile=` paths; a leading `-` marks a file that may be missing. */
  files: string[]
  /** The `[Service]` section's other keys, last value wins (`ExecStart`, `WorkingDirectory`). */
  keys: Map<string, string>
}

/**
 * The `[Service]` settings of a unit file and then its drop-ins (`texts`, in that order, as
 * systemd reads them), with the specifiers of `unitName` substituted: `%n` (`ueditor-b.service`),
 * `%N` (`ueditor-b`), `%p` (the part before `@`), `%i` and `%I` (the instance), `%%`.
 */
export function environmentSources(unitName: string, texts: readonly string[]): EnvironmentSources {
  const sources: EnvironmentSources = { environment: [], files: [], keys: new Map() }
  const specify = specifiers(unitName)
  for (const text of texts) {
    let section = ''
    for (const raw of text.split('\n')) {
      const line = raw.trim()
      if (line === '' || line.startsWith('#') || line.startsWith(';')) continue
      const header = /^\[(.+)\]$/.exec(line)
      if (header) {
        section = header[1] as string
        continue
      }
      const m = /^([A-Za-z]+)\s*=\s*(.*)$/.exec(line)
      if (section !== 'Service' || !m) continue
      const [, key, value] = m as unknown as [string, string, string]
      const v = specify(value)
      // An empty assignment empties the list, as in systemd.
      if (key === 'Environment')
        sources.environment = v === '' ? [] : [...sources.environment, ...words(v)]
      else if (key === 'EnvironmentFile') sources.files = v === '' ? [] : [...sources.files, v]
      else sources.keys.set(key, v)
    }
  }
  return sources
}

function specifiers(unitName: string): (value: string) => string {
  const name = unitName.replace(/\.[a-z]+$/, '')
  const [prefix, instance = ''] = name.split('@') as [string, string?]
  const table: Record<string, string> = {
    n: unitName,
    N: name,
    p: prefix,
    i: instance,
    I: instance,
    '%': '%',
  }
  return (value) =>
    value.replace(/%(.)/g, (all, c: string) => {
      const found = table[c]
      if (found === undefined) throw new Error(`specifier ${all} is not known to this reader`)
      return found
    })
}

/** `Environment=`'s assignments: separated by spaces, each may be in double or single quotes. */
function words(value: string): string[] {
  return [...value.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? '')
}

/**
 * The environment systemd gives the service (systemd.exec(5)): the `Environment=` assignments
 * in order, then each `EnvironmentFile=` in order, whose assignments override every
 * `Environment=` one and those of the files before it. A missing file is an error unless it is
 * marked optional (`-`). `read` answers a file's text, or undefined when it does not exist.
 */
export function resolveEnvironment(
  sources: EnvironmentSources,
  read: (path: string) => string | undefined,
): Map<string, string> {
  const env = new Map<string, string>()
  for (const assignment of sources.environment) {
    const at = assignment.indexOf('=')
    if (at > 0) env.set(assignment.slice(0, at), assignment.slice(at + 1))
  }
  for (const entry of sources.files) {
    const optional = entry.startsWith('-')
    const path = optional ? entry.slice(1) : entry
    const text = read(path)
    if (text === undefined) {
      if (optional) continue
      throw new Error(`EnvironmentFile=${path} does not exist: the service would not start`)
    }
    for (const [name, value] of parseEnvFile(text, path)) env.set(name, value)
  }
  return env
}

const ANALYZE = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find(
  (p) => spawnSync(p, ['--version']).status === 0,
)

/**
 * systemd's own reading of `unitFile` (with the drop-ins next to it, `<unit>.d/*.conf`):
 * `systemd-analyze verify`'s warnings, and the `Environment` and `EnvironmentFile` entries of
 * its debug dump of the unit, in systemd's order. Undefined where systemd-analyze is missing.
 */
export function systemdReading(
  unitFile: string,
): { warnings: string; environment: string[]; files: string[] } | undefined {
  if (!ANALYZE) return undefined
  const run = (debug: boolean) =>
    spawnSync(ANALYZE, ['verify', unitFile], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { PATH: process.env.PATH, ...(debug ? { SYSTEMD_LOG_LEVEL: 'debug' } : {}) },
    })
  const plain = run(false)
  const dump = run(true).stdout
  const entries = (key: string) =>
    [...dump.matchAll(new RegExp(`^\\t+${key}: (.*)$`, 'gm'))].map((m) => m[1] as string)
  return {
    warnings: `${plain.status === 0 ? '' : `exit ${plain.status}\n`}${plain.stderr}`,
    environment: entries('Environment'),
    files: entries('EnvironmentFile'),
  }
}
