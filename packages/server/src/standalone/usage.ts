import { sep } from 'node:path'
import { packageFile } from '../shared/package-files.js'
import { envHelpLines } from './env-help.js'

/** How every command takes the service's environment file. */
export const ENV_FILE_HELP = `--env-file <file>  reads NAME=value lines from <file> first: the file the systemd unit
                   names in EnvironmentFile=, so a command sees the service's settings.
                   Variables already set in the environment win (each override is noted).`

export const DOCTOR_USAGE = `Usage: ueditor-server [--env-file <file>] doctor

Checks the configuration, the data folder, free space, the database and the bucket without
starting the server, and says what to fix. Exit code 0 when it can serve, 1 when not.

${ENV_FILE_HELP}`

/*
 * The usage texts live here, apart from the commands they describe, so that `--help` loads
 * none of them (a command's module loads the database and the storage).
 */

/** The command line, for the binary's own usage text. */
export const FILES_COMMANDS =
  'ueditor-server files reconcile [--fix] [--grace <duration>] [--quiet]\n' +
  '       ueditor-server files orphans [--fix] [--grace <duration>] [--quiet]'

/** Exit code when mismatches were found and are still there. */
export const MISMATCHES_LEFT = 3

export const FILES_USAGE = `Usage: ${FILES_COMMANDS}

reconcile  compares the stored objects with the index rows and lists objects without a row
           and rows without an object (what a crash can leave). Exit code 0 when nothing is
           left to fix, ${MISMATCHES_LEFT} when mismatches remain, 1 when it cannot run.
--fix      deletes objects without a row and rows without an object, but only those older
           than the grace period: an upload in flight stores its object before its row.
           Only objects named as this server names uploads (the configured *PathFormat and
           an extension) are ever deleted; any other file is reported as foreign and kept.
--grace    the grace period: 7d, 12h, 30m or a number of seconds (default 1h); 0 with care.
--quiet    print nothing when nothing is left to fix (for cron, which mails any output).

orphans    lists the stored files no document references (docs/documents.md), stored after
           document tracking started (documents.enabled) and longer ago than the grace
           period. A reference is a key a document's last save found, in any address form
           (any host or port, a former CDN, page-relative); publicUrl does not enter into it. Exit code 0 when none are left, ${MISMATCHES_LEFT} when some remain, 1 when it
           cannot run.
--fix      removes them (index row, then the stored object); their bytes leave the owner's
           quota. A file a document takes up again in the meantime is kept.
--grace    the grace period: 7d, 12h, 30m or a number of seconds (default documents.orphanGrace,
           7d).
--quiet    print nothing when no orphan is left (for cron).

Uses the same configuration as "serve" (--env-file, UEDITOR_CONFIG, UEDITOR_* variables);
never creates an index that does not exist.`

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

/** The command lines, for the binary's own usage text. */
export const MATERIALS_COMMANDS = `ueditor-server materials import <file.json> [--create-index]
       ueditor-server materials export [file.json]`

export const MATERIALS_USAGE = `Usage: ${MATERIALS_COMMANDS}

import  upserts categories, then materials, by id (running it twice changes nothing);
        the whole file is validated first and written in one transaction.
        --create-index: a new install has no index before its first start; create it
        (import before the first start also keeps the demo materials out).
export  writes every category and material as JSON (to stdout without a file).
Both use the same configuration as "serve" (--env-file, UEDITOR_CONFIG, UEDITOR_* variables).
Without --create-index neither creates an index that does not exist.`

/** The docs this package carries, as a path (ending in a separator). */
export function docsFolder(): string {
  return packageFile('docs', sep)
}

/** `ueditor-server --help`: the commands, then every environment variable the server reads. */
export async function usageText(): Promise<string> {
  const docs = docsFolder()
  const variables = await envHelpLines()
  const width = Math.max(...variables.map(([name]) => name.length), 'UEDITOR_CONFIG'.length)
  const row = (name: string, help: string) => `  ${name.padEnd(width)}  ${help}`
  return `Usage: ueditor-server [--env-file <file>] [serve]
       ueditor-server doctor
       ${MATERIALS_COMMANDS}
       ${FILES_COMMANDS}
       ${INDEX_COMMANDS}
       ueditor-server --version | --help
       ueditor-server <command> --help

Commands:
  serve      run the server (the default)
  doctor     check the config, data folder, free space, database and bucket, and say what to fix
  materials  import or export the designer's materials as JSON
  files      reconcile: find (and with --fix remove) objects without an index row and rows
             without an object, such as a crash can leave
  index      backup: an online copy of the SQLite index

Options (before or after the command):
  ${ENV_FILE_HELP.replaceAll('\n', '\n  ')}

Configuration comes from a JSON file (UEDITOR_CONFIG) and these environment variables,
which override it; every key is described in ${docs}config.md.
The package's docs (auth, deployment, operations, errors) are in ${docs}

Environment variables:
${row('UEDITOR_CONFIG', 'JSON config file')}
${variables.map(([name, help]) => row(name, help)).join('\n')}
`
}
