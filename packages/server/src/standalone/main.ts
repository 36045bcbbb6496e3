#!/usr/bin/env node
import { userInfo } from 'node:os'
import { dirname } from 'node:path'
import { isUeError } from '../shared/errors.js'
import { takeEnvFile } from './args.js'
import { applyEnvFile, EnvFileError } from './env-file.js'
import { DOCTOR_USAGE, FILES_USAGE, INDEX_USAGE, MATERIALS_USAGE, usageText } from './usage.js'
import { packageVersion } from './version.js'

/*
 * Each command loads its own modules when it runs: `--version` and `--help` load none of the
 * server's, and a maintenance command only the database and storage it uses.
 */

/** What `ueditor-server <command> --help` prints. */
const COMMAND_USAGE: Record<string, () => string | Promise<string>> = {
  serve: usageText,
  doctor: () => `${DOCTOR_USAGE}\n`,
  materials: () => `${MATERIALS_USAGE}\n`,
  files: () => `${FILES_USAGE}\n`,
  index: () => `${INDEX_USAGE}\n`,
}

async function main(args: string[]): Promise<number> {
  const envFile = takeEnvFile(args)
  if (envFile && 'problem' in envFile) {
    process.stderr.write(`${envFile.problem}\n\n${await usageText()}`)
    return 2
  }
  const argv = envFile === undefined ? args : args.filter((_, i) => !envFile.positions.has(i))
  const command = argv[0] ?? 'serve'
  const help = COMMAND_USAGE[command]
  if (help && argv.slice(1).some((a) => a === '--help' || a === '-h')) {
    process.stdout.write(await help())
    return 0
  }
  if (envFile !== undefined) {
    try {
      for (const note of applyEnvFile(envFile.file)) process.stderr.write(`${note}\n`)
    } catch (e) {
      if (!(e instanceof EnvFileError)) throw e
      process.stderr.write(`${e.message}\n`)
      return 1
    }
  }
  quietSdkNotice(process.env)
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(await usageText())
    return 0
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    process.stdout.write(`${packageVersion()}\n`)
    return 0
  }
  if (command === 'materials')
    return (await import('./materials-cli.js')).runMaterialsCommand(argv.slice(1))
  if (command === 'files') return (await import('./files-cli.js')).runFilesCommand(argv.slice(1))
  if (command === 'index') return (await import('./index-cli.js')).runIndexCommand(argv.slice(1))
  if (command === 'doctor' && argv.length === 1) return (await import('./doctor.js')).runDoctor()
  if (command !== 'serve' || argv.length > 1) {
    const what = command === 'serve' ? `argument "${argv[1]}"` : `command "${command}"`
    process.stderr.write(`Unknown ${what}.\n\n${await usageText()}`)
    return 2
  }
  const [{ startServer }, { bannerText }] = await Promise.all([
    import('./serve.js'),
    import('./banner.js'),
  ])
  const server = await startServer()
  process.stderr.write(bannerText(server, packageVersion()))
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      const started = performance.now()
      process.stderr.write(`${signal} received, finishing in-flight requests…\n`)
      const stopped = (trouble: string) => {
        const seconds = ((performance.now() - started) / 1000).toFixed(1)
        process.stderr.write(`ueditor-server stopped after ${signal} in ${seconds} s${trouble}\n`)
        resolve()
      }
      server.close().then(
        () => stopped(''),
        (e: unknown) => stopped(`; closing failed: ${(e as Error).message}`),
      )
    }
    process.once('SIGTERM', () => stop('SIGTERM'))
    process.once('SIGINT', () => stop('SIGINT'))
  })
  return 0
}

/**
 * On Node 20 the AWS SDK prints a 9-line notice (its releases from 2027 need Node 22) when the
 * S3 driver first makes a client: on every start and every cron run, which mails it. It is
 * turned off by the SDK's own switch, unless the environment sets that switch itself; every
 * other warning still shows, and `doctor` says the same in one line.
 */
function quietSdkNotice(env: NodeJS.ProcessEnv): void {
  env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'
}

// A command whose work stops waiting on nothing would end the process with status 0 and no
// word; say so and fail instead.
let settled = false
process.once('beforeExit', () => {
  if (settled) return
  process.stderr.write(
    'ueditor-server: the command stopped before it finished (an internal error)\n',
  )
  process.exitCode = 70
})

main(process.argv.slice(2)).then(
  (code) => {
    settled = true
    process.exit(code)
  },
  async (err: unknown) => {
    settled = true
    const listen = err as NodeJS.ErrnoException & { address?: string; port?: number }
    if (isUeError(err) && err.code === 'UE_CONFIG_INVALID') {
      process.stderr.write(`Invalid configuration:${err.detail ?? ''}\n`)
    } else if (isUeError(err) && err.code === 'UE_DEPENDENCY_MISSING') {
      process.stderr.write(
        `ueditor-server cannot start (UE_DEPENDENCY_MISSING): a package is not installed:${err.detail ?? ''}\n`,
      )
    } else if (listen.syscall === 'listen') {
      const why = listen.code === 'EADDRINUSE' ? 'the port is in use' : listen.code
      process.stderr.write(
        `ueditor-server cannot listen on ${listen.address}:${listen.port}: ${why}. ` +
          'Stop the other server or choose another port (PORT, http.port); nothing was written.\n',
      )
    } else if (isPermissionError(err)) {
      process.stderr.write(await permissionText(err))
    } else {
      process.stderr.write(`ueditor-server failed to start: ${(err as Error).message}\n`)
    }
    process.exit(1)
  },
)

function isPermissionError(err: unknown): err is NodeJS.ErrnoException & { path: string } {
  const e = err as NodeJS.ErrnoException
  return ['EACCES', 'EPERM', 'EROFS'].includes(e?.code ?? '') && typeof e.path === 'string'
}

/** A folder the server may not write to: which one, as which user, and how to fix it. */
async function permissionText(err: NodeJS.ErrnoException & { path: string }): Promise<string> {
  const uid = process.getuid?.() ?? -1
  let username = `uid ${uid}`
  try {
    username = userInfo().username
  } catch {
    // A uid without a passwd entry (containers) has no name; the number says who it is.
  }
  let dataDir: string | undefined
  try {
    const { loadConfig } = await import('../config/load.js')
    dataDir = loadConfig().dataDir
  } catch {
    // The config loaded once already; if it no longer does, the path alone is the hint.
  }
  const mkdir = err.syscall === 'mkdir'
  const what = mkdir
    ? `create the folder ${err.path}: ${dirname(err.path)}`
    : `${err.syscall ?? 'open'} ${err.path}: it`
  const why =
    err.code === 'EROFS'
      ? 'is on a read-only file system'
      : mkdir
        ? 'is not writable'
        : 'is not allowed'
  // The server writes all over the data folder: fixing one folder inside it would only move the error.
  const inData =
    dataDir !== undefined && (err.path === dataDir || err.path.startsWith(`${dataDir}/`))
  const target = inData ? dataDir : err.path
  return (
    `ueditor-server cannot ${what} ${why} for user ${username} (uid ${uid}, ${err.code}).\n` +
    `  Fix: give that user the folder (sudo mkdir -p ${target} && sudo chown -R ${username} ${target}),\n` +
    '  or point UEDITOR_DATA_DIR (and any folder set apart from it) at one it can write. Nothing was served.\n'
  )
}
