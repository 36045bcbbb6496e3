import type { ServerConfigInput } from '../../src/config/schema.js'
import { type AiUpstream, startAiUpstream } from './ai-upstream.js'
import { recordingLogger, TOKENS } from './auth.js'
import { startTestServer, type TestServer } from './start-server.js'

export interface AiRelay {
  srv: TestServer
  upstream: AiUpstream
  log: ReturnType<typeof recordingLogger>
}

/**
 * The fake AI upstream and a test server relaying to it for the users of `TOKENS`, logging to a
 * recording logger. `ai` overrides the relay's settings, `extra` adds to the server's config.
 */
export async function startAiRelay(
  t: { after(fn: () => Promise<void>): void },
  ai: NonNullable<ServerConfigInput['ai']> = {},
  extra: ServerConfigInput = {},
): Promise<AiRelay> {
  const upstream = await startAiUpstream(t)
  const log = recordingLogger()
  const srv = await startTestServer(
    t,
    {
      auth: { tokens: TOKENS },
      ai: { baseUrl: upstream.baseUrl, apiKey: 'sk-test', model: 'test-model', ...ai },
      ...extra,
    },
    { logger: log },
  )
  return { srv, upstream, log }
}

/** The relay's audit records written so far, parsed. */
export const auditLines = (log: AiRelay['log']) =>
  log.lines.filter((l) => l.includes('"audit":"ai"')).map((l) => JSON.parse(l))
