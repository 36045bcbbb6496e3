#!/usr/bin/env node
import { isUeError } from '../shared/errors.js'
import { bannerText } from './banner.js'
import { runDoctor } from './doctor.js'
import { runFilesCommand } from './files-cli.js'
import { runMaterialsCommand } from './materials-cli.js'
import { startServer } from './serve.js'
import { usageText } from './usage.js'
import { packageVersion } from './version.js'

async function main(argv: string[]): Promise<number> {
  const command = argv[0] ?? 'serve'
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(usageText())
    return 0
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    process.stdout.write(`${packageVersion()}\n`)
    return 0
  }
  if (command === 'materials') return runMaterialsCommand(argv.slice(1))
  if (command === 'files') return runFilesCommand(argv.slice(1))
  if (command === 'doctor' && argv.length === 1) return runDoctor()
  if (command !== 'serve' || argv.length > 1) {
    const what = command === 'serve' ? `argument "${argv[1]}"` : `command "${command}"`
    process.stderr.write(`Unknown ${what}.\n\n${usageText()}`)
    return 2
  }
  const server = await startServer()
  process.stderr.write(bannerText(server, packageVersion()))
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
    const listen = err as NodeJS.ErrnoException & { address?: string; port?: number }
    if (isUeError(err) && err.code === 'UE_CONFIG_INVALID') {
      process.stderr.write(`Invalid configuration:${err.detail ?? ''}\n`)
    } else if (listen.syscall === 'listen') {
      const why = listen.code === 'EADDRINUSE' ? 'the port is in use' : listen.code
      process.stderr.write(
        `ueditor-server cannot listen on ${listen.address}:${listen.port}: ${why}. ` +
          'Stop the other server or choose another port (PORT, http.port); nothing was written.\n',
      )
    } else {
      process.stderr.write(`ueditor-server failed to start: ${(err as Error).message}\n`)
    }
    process.exit(1)
  },
)
