/**
 * Run by Bun or Deno (never by Node): the server's `ue.fetch` behind the runtime's own HTTP
 * server, as docs/mounting.md shows it. Reads the config from `UE_RUNTIME_CONFIG` (JSON), listens
 * on 127.0.0.1 at a free port and prints `listening <url>`.
 */
import process from 'node:process'
import { createUeditorServer } from '../../src/index.js'
import type { ConnectionInfo } from '../../src/shared/request-info.js'

type Serve = (request: Request, info: ConnectionInfo) => Promise<Response>

interface BunRuntime {
  serve(o: {
    hostname: string
    port: number
    fetch(
      request: Request,
      server: { requestIP(r: Request): { address: string } | null },
    ): Promise<Response>
  }): { port: number }
}

interface DenoRuntime {
  serve(
    o: { hostname: string; port: number; onListen(at: { port: number }): void },
    handler: (request: Request, info: { remoteAddr: { hostname: string } }) => Promise<Response>,
  ): unknown
}

const runtime = globalThis as { Bun?: BunRuntime; Deno?: DenoRuntime }

const ue = await createUeditorServer({
  env: {},
  config: JSON.parse(process.env.UE_RUNTIME_CONFIG ?? '{}'),
})
const serve: Serve = (request, info) => ue.fetch(request, info)
const listening = (port: number) => console.log(`listening http://127.0.0.1:${port}`)

if (runtime.Bun) {
  const server = runtime.Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (request, srv) => serve(request, { remoteAddress: srv.requestIP(request)?.address }),
  })
  listening(server.port)
} else if (runtime.Deno) {
  runtime.Deno.serve(
    { hostname: '127.0.0.1', port: 0, onListen: ({ port }) => listening(port) },
    (request, info) => serve(request, { remoteAddress: info.remoteAddr.hostname }),
  )
} else {
  throw new Error('runtime-host runs under Bun or Deno')
}

process.on('SIGTERM', () => {
  void ue.close().finally(() => process.exit(0))
})
