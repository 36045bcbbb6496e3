import { isUeError } from '../shared/errors.js'
import { readArgs } from './args.js'
import { withStore } from './with-store.js'

/** The command line, for the binary's own usage text. */
export const INDEX_COMMANDS = 'ueditor-server index backup <file>'

export const INDEX_USAGE = `Usage: ${INDEX_COMMANDS}

backup  writes a consistent copy of the SQLite index to <file> while the server keeps running
        (SQLite's VACUUM INTO: readers and writers are not stopped). The copy is written next
        to <file> and renamed over it, so <file> is always a whole backup. Back up the index
        before the upload folder (docs/operations.md, Backups). A PostgreSQL index is backed up
        with pg_dump instead.
Uses the same configuration as "serve" (--env-file, UEDITOR_CONFIG, UEDITOR_* variables); never
creates an index that does not exist.`

/** `ueditor-server index …`; returns the exit code. */
export async function runIndexCommand(args: readonly string[]): Promise<number> {
  const usage = (problem: string) => {
    process.stderr.write(`${problem}\n\n${INDEX_USAGE}\n`)
    return 2
  }
  const [command, file] = args
  if (command !== 'backup')
    return usage(command === undefined ? 'Missing command.' : `Unknown command "${command}".`)
  if (file === undefined || file.startsWith('-')) return usage('index backup needs a file.')
  const parsed = readArgs(args.slice(1), { positionals: 1 })
  if ('problem' in parsed) return usage(parsed.problem)
  return withStore(
    async (store) => {
      if (store.dialect === 'postgres') {
        process.stderr.write(
          'The index is in PostgreSQL: back it up with pg_dump (docs/operations.md, Backups).\n',
        )
        return 2
      }
      try {
        await store.backup(file)
      } catch (err) {
        if (!isUeError(err)) throw err
        process.stderr.write(`index backup failed (${err.code}): ${err.detail ?? err.message}\n`)
        return 1
      }
      process.stdout.write(`Backed up the index to ${file}\n`)
      return 0
    },
    { migrate: false },
  )
}
