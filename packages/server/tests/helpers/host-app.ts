import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type RequestListener } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import type { ServerConfigInput } from '../../src/config/schema.js'
import { createUeditorServer, type UeditorServer } from '../../src/index.js'
import { anonymousUnlessSet } from './start-server.js'

/**
 * A host app on 127.0.0.1:0 around an embedded server; both closed after the test. Without an
 * auth setting the server is anonymous on purpose (`auth.mode: 'none'`).
 */
export async function hostApp(
  t: TestContext,
  listener: (ue: UeditorServer) => RequestListener,
  config: ServerConfigInput = {},
): Promise<string> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ueditor-embed-'))
  const ue = await createUeditorServer({
    env: {},
    config: { logLevel: 'silent', ...anonymousUnlessSet(config), dataDir },
  })
  const app = createServer(listener(ue))
  await new Promise<void>((r) => app.listen(0, '127.0.0.1', r))
  t.after(async () => {
    app.closeAllConnections()
    await new Promise((r) => app.close(r))
    await ue.close()
    await rm(dataDir, { recursive: true, force: true })
  })
  return `http://127.0.0.1:${(app.address() as AddressInfo).port}`
}
