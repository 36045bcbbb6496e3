import { fileURLToPath } from 'node:url'
import { ENV_VARS } from '../config/env-vars.js'
import { FILES_COMMANDS } from './files-cli.js'
import { INDEX_COMMANDS } from './index-cli.js'
import { MATERIALS_COMMANDS } from './materials-cli.js'

/** How every command takes the service's environment file. */
export const ENV_FILE_HELP = `--env-file <file>  reads NAME=value lines from <file> first: the file the systemd unit
                   names in EnvironmentFile=, so a command sees the service's settings.
                   Variables already set in the environment win (each override is noted).`

export const DOCTOR_USAGE = `Usage: ueditor-server [--env-file <file>] doctor

Checks the configuration, the data folder, free space, the database and the bucket without
starting the server, and says what to fix. Exit code 0 when it can serve, 1 when not.

${ENV_FILE_HELP}`

/** The docs this package carries (dist/src/standalone → package root → docs), as a path. */
export function docsFolder(): string {
  return fileURLToPath(new URL('../../../docs/', import.meta.url))
}

/** `ueditor-server --help`: the commands, then every environment variable the server reads. */
export function usageText(): string {
  const docs = docsFolder()
  const width = Math.max(...ENV_VARS.map((v) => v.name.length), 'UEDITOR_CONFIG'.length)
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
${ENV_VARS.map((v) => row(v.name, v.help)).join('\n')}
`
}
