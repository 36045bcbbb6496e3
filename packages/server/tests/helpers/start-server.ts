import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import type { ServerConfigInput } from '../../src/config/schema.js'
import type { UeditorOptions } from '../../src/server.js'
import { type RunningServer, startServer } from '../../src/standalone/serve.js'

export interface TestServer extends RunningServer {
  dataDir: string
  /** `url + routes.editor + '?action=' + action` plus extra query text. */
  action(name: string, query?: string): string
  /** The upload folder; only for servers using the local storage driver. */
  storageRoot(): string
  /** Every file under the storage root and the temp folder, relative paths. */
  storedFiles(): Promise<string[]>
  tempFiles(): Promise<string[]>
}

type StartOptions = Pick<UeditorOptions, 'remote' | 'logger' | 'authorize' | 'on'>

/**
 * A real standalone server on 127.0.0.1:0 with a fresh data folder; closed after the test. A
 * test that sets no auth at all means anonymous use, so it gets `auth.mode: 'none'` said
 * explicitly, as an operator would; `startUnconfiguredServer` keeps the default.
 */
export async function startTestServer(
  t: TestContext | { after(fn: () => Promise<void>): void },
  config: ServerConfigInput = {},
  options: StartOptions = {},
): Promise<TestServer> {
  return startUnconfiguredServer(
    t,
    anonymousUnlessSet(config, options.authorize !== undefined),
    options,
  )
}

/**
 * `config` with `auth.mode: 'none'` added when it sets no auth mode nor a credential of one
 * (and no `authorize` hook is passed): what a test that means anonymous use starts.
 */
export function anonymousUnlessSet(config: ServerConfigInput, hook = false): ServerConfigInput {
  const auth = config.auth ?? {}
  const set =
    hook ||
    auth.mode !== undefined ||
    (auth.tokens?.length ?? 0) > 0 ||
    auth.jwt?.secret !== undefined ||
    auth.jwt?.jwksUrl !== undefined
  return set ? config : { ...config, auth: { ...auth, mode: 'none' } }
}

/** As `startTestServer`, with no auth setting added: as a server started with none. */
export async function startUnconfiguredServer(
  t: TestContext | { after(fn: () => Promise<void>): void },
  config: ServerConfigInput = {},
  options: StartOptions = {},
): Promise<TestServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ueditor-test-'))
  const removeDataDir = () => rm(dataDir, { recursive: true, force: true })
  const server = await startServer({
    ...options,
    env: {},
    config: {
      logLevel: 'silent',
      ...config,
      dataDir,
      http: { port: 0, host: '127.0.0.1', shutdownGraceMs: 2_000, ...config.http },
    },
  }).catch(async (e: unknown) => {
    // A test that expects the start to fail still leaves no folder behind.
    await removeDataDir()
    throw e
  })
  t.after(async () => {
    await server.close()
    await removeDataDir()
  })
  const { routes } = server.ue.config
  return Object.assign(server, {
    dataDir,
    action: (name: string, query = '') => `${server.url}${routes.editor}?action=${name}${query}`,
    storageRoot: () => localRoot(server),
    storedFiles: () => listFiles(localRoot(server)),
    tempFiles: () => listFiles(server.ue.config.uploads.tempDir),
  })
}

function localRoot(server: RunningServer): string {
  const { storage } = server.ue.config
  if (storage.driver !== 'local') throw new Error(`this server stores files in ${storage.driver}`)
  return storage.root
}

async function listFiles(root: string): Promise<string[]> {
  try {
    const entries = await readdir(root, { recursive: true, withFileTypes: true })
    return entries
      .filter((e) => e.isFile())
      .map((e) =>
        join(e.parentPath ?? (e as unknown as { path: string }).path, e.name).slice(
          root.length + 1,
        ),
      )
      .sort()
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw e
  }
}

/** One unlabelled series from the server's `/metrics` (0 when absent). */
export async function metric(srv: TestServer, name: string): Promise<number> {
  const text = await (await fetch(`${srv.url}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))
  return line ? Number(line.split(' ')[1]) : 0
}
