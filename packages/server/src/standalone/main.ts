#!/usr/bin/env node
import { isUeError } from '../shared/errors.js'
import { MATERIALS_COMMANDS, runMaterialsCommand } from './materials-cli.js'
import { startServer } from './serve.js'

const USAGE = `Usage: ueditor-server [serve]
       ${MATERIALS_COMMANDS}

Runs the UEditor backend. Configuration comes from a JSON file (UEDITOR_CONFIG) and
UEDITOR_* environment variables; see docs/config.md.`

async function main(argv: string[]): Promise<number> {
  const command = argv[0] ?? 'serve'
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  if (command === 'materials') return runMaterialsCommand(argv.slice(1))
  if (command !== 'serve') {
    process.stderr.write(`Unknown command "${command}".\n\n${USAGE}\n`)
    return 2
  }
  const server = await startServer()
  const { routes } = server.ue.config
  process.stderr.write(
    `ueditor-server listening on ${server.url}\n` +
      `  editor endpoint (serverUrl): ${server.url}${routes.editor}\n` +
      `  stored files:                ${server.url}${routes.files}/\n` +
      (server.ue.config.materials.enabled
        ? `  materials (designer):        ${server.url}${routes.materials}/categories\n`
        : ''),
  )
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      process.stderr.write(`${signal} received, finishing in-flight requests…\n`)
      server.close().then(resolve, resolve)
    }
    process.once('SIGTERM', () => stop('SIGTERM'))
    process.once('SIGINT', () => stop('SIGINT'))
  })
  return 0
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (isUeError(err) && err.code === 'UE_CONFIG_INVALID') {
      process.stderr.write(`Invalid configuration:${err.detail ?? ''}\n`)
    } else {
      process.stderr.write(`ueditor-server failed to start: ${(err as Error).message}\n`)
    }
    process.exit(1)
  },
)
