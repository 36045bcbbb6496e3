import { isUeError } from '../shared/errors.js'
import { readArgs } from './args.js'
import { INDEX_USAGE } from './usage.js'
import { withStore } from './with-store.js'

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
