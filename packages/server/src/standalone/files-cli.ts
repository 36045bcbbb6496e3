import type { ServerConfig } from '../config/load.js'
import { buildActionTable } from '../editor/action-table.js'
import { keyRecogniser } from '../ingest/keys.js'
import { isUeError } from '../shared/errors.js'
import { storageDriver } from '../start-up.js'
import { unfinishedUploadId } from '../uploads/unfinished-keys.js'
import { type Action, type Mismatch, reconcile } from './reconcile.js'
import { withStore } from './with-store.js'

/** The command line, for the binary's own usage text. */
export const FILES_COMMANDS =
  'ueditor-server files reconcile [--fix] [--grace <duration>] [--quiet]'

/** Exit code when mismatches were found and are still there. */
export const MISMATCHES_LEFT = 3

const DEFAULT_GRACE_MS = 60 * 60 * 1000

export const FILES_USAGE = `Usage: ${FILES_COMMANDS}

reconcile  compares the stored objects with the index rows and lists objects without a row
           and rows without an object (what a crash can leave). Exit code 0 when nothing is
           left to fix, ${MISMATCHES_LEFT} when mismatches remain, 1 when it cannot run.
--fix      deletes objects without a row and rows without an object, but only those older
           than the grace period: an upload in flight stores its object before its row.
           Only objects named as this server names uploads (the configured *PathFormat and
           an extension) are ever deleted; any other file is reported as foreign and kept.
--grace    the grace period: a number with s, m, h or d (default 1h); 0 with care.
--quiet    print nothing when nothing is left to fix (for cron, which mails any output).
Uses the same configuration as "serve" (--env-file, UEDITOR_CONFIG, UEDITOR_* variables);
never creates an index that does not exist.`

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
  let quiet = false
  let graceMs = DEFAULT_GRACE_MS
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]
    if (arg === '--fix') fix = true
    else if (arg === '--quiet') quiet = true
    else if (arg === '--grace') {
      const parsed = parseDuration(rest[++i])
      if (parsed === null) return usage(`--grace needs a duration such as 30m or 2h.`)
      graceMs = parsed
    } else return usage(`Unexpected argument "${arg}".`)
  }
  return withStore(async (store, config) => {
    const storage = storageDriver(config.storage)
    // Held back under --quiet until it is known whether anything is left to fix; foreign
    // objects are never anything to fix, so --quiet does not list them (only counts them).
    const lines: string[] = []
    const say = (text: string) => (quiet ? lines.push(text) : process.stdout.write(text))
    try {
      const summary = await reconcile({
        storage,
        files: store.files,
        fix,
        graceMs,
        ours: keyRecogniser(uploadPathFormats(config)),
        unfinished: { idOfKey: unfinishedUploadId, uploads: store.uploads },
        onMismatch: (m, action) => {
          if (!quiet || m.kind !== 'foreign object') say(`${describe(m, action)}\n`)
        },
      })
      const found =
        summary.objectsWithoutRow + summary.rowsWithoutObject + summary.unfinishedWithoutRow
      const left = found - summary.fixed
      say(
        `\nChecked ${count(summary.objects, 'object')} in ${storage.kind} storage and ` +
          `${count(summary.rows, 'index row')}: ${count(summary.objectsWithoutRow, 'object')} ` +
          `without a row, ${count(summary.rowsWithoutObject, 'row')} without an object` +
          (summary.foreign > 0 ? `, ${count(summary.foreign, 'foreign object')} left alone` : '') +
          (summary.unfinished > 0
            ? `, ${count(summary.unfinished, 'object')} of uploads still in progress`
            : '') +
          (summary.unfinishedWithoutRow > 0
            ? `, ${count(summary.unfinishedWithoutRow, 'object')} of abandoned uploads`
            : '') +
          (fix ? `; ${summary.fixed} fixed.\n` : '.\n') +
          (left > 0 && !fix ? 'Run with --fix to remove them.\n' : ''),
      )
      if (left > 0 && quiet) process.stdout.write(lines.join(''))
      return left > 0 ? MISMATCHES_LEFT : 0
    } catch (err) {
      if (quiet) process.stdout.write(lines.join(''))
      if (!isUeError(err)) throw err
      process.stderr.write(`files reconcile could not finish (${err.code}): ${err.message}\n`)
      return 1
    } finally {
      await storage.close?.()
    }
  })
}

/** Every path format an upload action renders keys from: the keys this server gives. */
function uploadPathFormats(config: ServerConfig): string[] {
  return [...buildActionTable(config.editor).values()].flatMap((def) =>
    'rule' in def && 'pathFormat' in def.rule ? [def.rule.pathFormat] : [],
  )
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
