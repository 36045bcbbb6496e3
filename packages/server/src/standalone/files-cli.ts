import { parseDuration } from '../config/duration.js'
import type { ServerConfig } from '../config/load.js'
import type { MetadataStore } from '../db/types.js'
import { sweepOrphans } from '../documents/orphans.js'
import { buildActionTable } from '../editor/action-table.js'
import { orphanEventHooks } from '../events/document-events.js'
import { removeAnnounced } from '../events/file-events.js'
import { createEvents, type Events } from '../events/publisher.js'
import { keyRecogniser } from '../ingest/keys.js'
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../shared/durations.js'
import { isUeError } from '../shared/errors.js'
import { silentLogger } from '../shared/log.js'
import type { Logger } from '../shared/types.js'
import { storageDriver } from '../start-up.js'
import { unfinishedUploadId } from '../uploads/unfinished-keys.js'
import { readArgs } from './args.js'
import { type Action, type Mismatch, reconcile } from './reconcile.js'
import { FILES_USAGE, MISMATCHES_LEFT } from './usage.js'
import { withStore } from './with-store.js'

export { MISMATCHES_LEFT }

const DEFAULT_GRACE_MS = 60 * 60 * 1000

/** `ueditor-server files …`; returns the exit code. */
export async function runFilesCommand(args: readonly string[]): Promise<number> {
  const usage = (problem: string) => {
    process.stderr.write(`${problem}\n\n${FILES_USAGE}\n`)
    return 2
  }
  const [command, ...rest] = args
  if (command === 'orphans') return runOrphans(rest, usage)
  if (command !== 'reconcile')
    return usage(command === undefined ? 'Missing command.' : `Unknown command "${command}".`)
  const parsed = optionsOf(rest)
  if ('problem' in parsed) return usage(parsed.problem)
  const { fix, quiet } = parsed
  const graceMs = parsed.graceMs ?? DEFAULT_GRACE_MS
  return withStore(async (store, config) => {
    const storage = await storageDriver(config.storage)
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
        // An object without a row was never announced as stored; a row that goes was.
        removeRow: (key) =>
          removeAnnounced(
            { files: store.files, events: cliEvents(config, store), publicUrl: config.publicUrl },
            key,
            'reconcile',
          ),
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

/**
 * Events of a command: to the outbox when a webhook is set, for the serving nodes to deliver
 * (they poll it); there are no in-process handlers outside a server.
 */
export function cliEvents(config: ServerConfig, store: MetadataStore): Events {
  return createEvents({
    outbox: config.webhooks.url === undefined ? undefined : store.outbox,
    log: silentLogger,
  })
}

/** `files orphans [--fix] [--grace <duration>] [--quiet]`. */
async function runOrphans(
  args: readonly string[],
  usage: (problem: string) => number,
): Promise<number> {
  const parsed = optionsOf(args)
  if ('problem' in parsed) return usage(parsed.problem)
  const { fix, quiet, graceMs } = parsed
  // Held back under --quiet until it is known whether any orphan is left.
  const lines: string[] = []
  const say = (text: string) => (quiet ? lines.push(text) : process.stdout.write(text))
  return withStore(async (store, config) => {
    const start = await store.documents.tracking()
    if (start === null) {
      say('Document tracking has never been on (documents.enabled), so no file is an orphan.\n')
      return 0
    }
    const grace = graceMs ?? (parseDuration(config.documents.orphanGrace) as number)
    const storage = await storageDriver(config.storage)
    try {
      const result = await sweepOrphans(
        { documents: store.documents, storage, log: cliLog },
        {
          storedBefore: Date.now() - grace,
          fix,
          hooks: orphanEventHooks(cliEvents(config, store), config.publicUrl),
          seen: (file, removed) =>
            say(
              `orphan: ${file.key} (${file.size} bytes, ${new Date(file.createdAt).toISOString()}` +
                `${file.owner === null ? '' : `, owner ${file.owner}`})${removed ? ': removed' : fix ? ': kept, a document uses it now' : ''}\n`,
            ),
        },
      )
      const left = result.found - result.removed
      say(
        `\n${count(result.found, 'orphan')} stored since ${new Date(start.startedAt).toISOString()} ` +
          `and more than ${graceText(grace)} ago` +
          (fix ? `; ${result.removed} removed (${result.bytes} bytes).\n` : '.\n') +
          (left > 0 && !fix ? 'Run with --fix to remove them.\n' : ''),
      )
      if (left > 0 && quiet) process.stdout.write(lines.join(''))
      return left > 0 ? MISMATCHES_LEFT : 0
    } catch (err) {
      if (quiet) process.stdout.write(lines.join(''))
      if (!isUeError(err)) throw err
      process.stderr.write(`files orphans could not finish (${err.code}): ${err.message}\n`)
      return 1
    } finally {
      await storage.close?.()
    }
  })
}

/** Warnings (an object that could not be deleted after its row) go to stderr as one line. */
const cliLog: Logger = {
  debug() {},
  info() {},
  warn: (fields, message) => process.stderr.write(`${message}: ${JSON.stringify(fields)}\n`),
  error: (fields, message) => process.stderr.write(`${message}: ${JSON.stringify(fields)}\n`),
}

const GRACE_NEEDED = '--grace needs a duration such as 7d, 12h, 30m or 3600.'

/** `[--fix] [--grace <duration>] [--quiet]`, or the problem with them. */
function optionsOf(
  args: readonly string[],
): { fix: boolean; quiet: boolean; graceMs: number | undefined } | { problem: string } {
  const parsed = readArgs(args, { flags: ['fix', 'quiet'], values: { grace: GRACE_NEEDED } })
  if ('problem' in parsed) return parsed
  const grace = parsed.values.get('grace')
  const graceMs = grace === undefined ? undefined : parseDuration(grace)
  if (grace !== undefined && graceMs === undefined) return { problem: GRACE_NEEDED }
  return { fix: parsed.flags.has('fix'), quiet: parsed.flags.has('quiet'), graceMs }
}

function graceText(ms: number): string {
  for (const [unit, size] of [
    ['d', DAY_MS],
    ['h', HOUR_MS],
    ['m', MINUTE_MS],
  ] as const)
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`
  return `${ms / 1000}s`
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

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`
}
