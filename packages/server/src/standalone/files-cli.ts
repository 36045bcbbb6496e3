import { storageDriver } from '../server.js'
import { isUeError } from '../shared/errors.js'
import { type Action, type Mismatch, reconcile } from './reconcile.js'
import { withStore } from './with-store.js'

/** The command line, for the binary's own usage text. */
export const FILES_COMMANDS = 'ueditor-server files reconcile [--fix] [--grace <duration>]'

/** Exit code when mismatches were found and are still there. */
export const MISMATCHES_LEFT = 3

const DEFAULT_GRACE_MS = 60 * 60 * 1000

const FILES_USAGE = `Usage: ${FILES_COMMANDS}

reconcile  compares the stored objects with the index rows and lists objects without a row
           and rows without an object (what a crash can leave). Exit code 0 when nothing is
           left to fix, ${MISMATCHES_LEFT} when mismatches remain, 1 when it cannot run.
--fix      deletes objects without a row and rows without an object, but only those older
           than the grace period: an upload in flight stores its object before its row.
--grace    the grace period: a number with s, m, h or d (default 1h); 0 with care.
Uses the same configuration as "serve" (UEDITOR_CONFIG, UEDITOR_* variables).`

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** `ueditor-server files …`; returns the exit code. */
export async function runFilesCommand(args: readonly string[]): Promise<number> {
  const usage = (problem: string) => {
    process.stderr.write(`${problem}\n\n${FILES_USAGE}\n`)
    return 2
  }
  const [command, ...rest] = args
  if (command !== 'reconcile')
    return usage(command === undefined ? 'Missing command.' : `Unknown command "${command}".`)
  let fix = false
  let graceMs = DEFAULT_GRACE_MS
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]
    if (arg === '--fix') fix = true
    else if (arg === '--grace') {
      const parsed = parseDuration(rest[++i])
      if (parsed === null) return usage(`--grace needs a duration such as 30m or 2h.`)
      graceMs = parsed
    } else return usage(`Unexpected argument "${arg}".`)
  }
  return withStore(async (store, config) => {
    const storage = storageDriver(config.storage)
    try {
      const summary = await reconcile({
        storage,
        files: store.files,
        fix,
        graceMs,
        onMismatch: (m, action) => process.stdout.write(`${describe(m, action)}\n`),
      })
      const found = summary.objectsWithoutRow + summary.rowsWithoutObject
      const left = found - summary.fixed
      process.stdout.write(
        `\nChecked ${count(summary.objects, 'object')} in ${storage.kind} storage and ` +
          `${count(summary.rows, 'index row')}: ${count(summary.objectsWithoutRow, 'object')} ` +
          `without a row, ${count(summary.rowsWithoutObject, 'row')} without an object` +
          (summary.foreign > 0 ? `, ${count(summary.foreign, 'foreign object')} left alone` : '') +
          (fix ? `; ${summary.fixed} fixed.\n` : '.\n') +
          (left > 0 && !fix ? 'Run with --fix to remove them.\n' : ''),
      )
      return left > 0 ? MISMATCHES_LEFT : 0
    } catch (err) {
      if (!isUeError(err)) throw err
      process.stderr.write(`files reconcile could not finish (${err.code}): ${err.message}\n`)
      return 1
    } finally {
      await storage.close?.()
    }
  })
}

function describe(m: Mismatch, action: Action): string {
  const what = `${m.kind}: ${m.key} (${m.size} bytes, ${new Date(m.at).toISOString()})`
  return action === 'reported' ? what : `${what}: ${action}`
}

function parseDuration(text: string | undefined): number | null {
  const m = text === undefined ? null : /^(\d+)([smhd])?$/.exec(text)
  if (!m) return null
  const n = Number(m[1])
  if (m[2] === undefined) return n === 0 ? 0 : null
  return n * (UNIT_MS[m[2]] ?? 0)
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`
}
