import { ENV_VARS } from '../config/load.js'
import { FILES_COMMANDS } from './files-cli.js'
import { MATERIALS_COMMANDS } from './materials-cli.js'

/** `ueditor-server --help`: the commands, then every environment variable the server reads. */
export function usageText(): string {
  const width = Math.max(...ENV_VARS.map((v) => v.name.length), 'UEDITOR_CONFIG'.length)
  const row = (name: string, help: string) => `  ${name.padEnd(width)}  ${help}`
  return `Usage: ueditor-server [serve]
       ueditor-server doctor
       ${MATERIALS_COMMANDS}
       ${FILES_COMMANDS}
       ueditor-server --version | --help

Commands:
  serve      run the server (the default)
  doctor     check the config, data folder, free space, database and bucket, and say what to fix
  materials  import or export the designer's materials as JSON
  files      reconcile: find (and with --fix remove) objects without an index row and rows
             without an object, such as a crash can leave

Configuration comes from a JSON file (UEDITOR_CONFIG) and these environment variables,
which override it; every key is described in docs/config.md.

Environment variables:
${row('UEDITOR_CONFIG', 'JSON config file')}
${ENV_VARS.map((v) => row(v.name, v.help)).join('\n')}
`
}
