import { readFileSync } from 'node:fs'

/**
 * `--env-file <file>`: the environment file the systemd unit names in `EnvironmentFile=`, read
 * by the command line too, so a maintenance command sees the configuration the service runs
 * with. Only the part of the format that systemd and this reader understand alike is accepted
 * (`NAME=value` lines, `#` or `;` comment lines, blank lines, a value wholly in quotes); anything
 * else is refused with its line, rather than read differently from the service.
 */
export function parseEnvFile(text: string, file: string): Map<string, string> {
  const out = new Map<string, string>()
  const lines = text.split(/\r?\n/)
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line)
    const value = m ? unquoted((m[2] as string).trim()) : null
    if (!m || value === null)
      throw new EnvFileError(
        `${file}, line ${i + 1}: expected NAME=value (no "export", no backslash or quote ` +
          'inside a value), which systemd and ueditor-server read alike',
      )
    out.set(m[1] as string, value)
  }
  return out
}

function unquoted(value: string): string | null {
  const quoted = /^"([^"\\]*)"$/.exec(value) ?? /^'([^'\\]*)'$/.exec(value)
  if (quoted) return quoted[1] as string
  return /["'\\]/.test(value) ? null : value
}

export class EnvFileError extends Error {}

/**
 * Reads the file into `env`. A variable already set in `env` wins (as with Node's own
 * `--env-file`), so one value can be overridden for one run; each such override of a UEDITOR_*
 * setting, HOST or PORT is returned as a note, so it is never silent.
 */
export function applyEnvFile(file: string, env: NodeJS.ProcessEnv = process.env): string[] {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    throw new EnvFileError(
      `cannot read the environment file ${file} (${code}): ` +
        (code === 'EACCES'
          ? 'run the command as the service user, who can read it'
          : 'give the path the systemd unit names in EnvironmentFile='),
    )
  }
  const notes: string[] = []
  for (const [name, value] of parseEnvFile(text, file)) {
    const current = env[name]
    if (current === undefined) env[name] = value
    else if (current !== value && /^(UEDITOR_|HOST$|PORT$)/.test(name))
      notes.push(`${name} from the environment overrides the value in ${file}`)
  }
  return notes
}
