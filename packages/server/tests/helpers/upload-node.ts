import { randomBytes } from 'node:crypto'
import type { TestContext } from 'node:test'
import { createAdmission } from '../../src/admission/admit.js'
import { serverUploadGate } from '../../src/admission/gate.js'
import { createAuthenticator } from '../../src/auth/authenticator.js'
import { resolveAuthMode } from '../../src/auth/mode.js'
import { failureThrottle } from '../../src/auth/throttle.js'
import type { ServerConfig } from '../../src/config/load.js'
import type { NewUpload } from '../../src/db/upload-ledger.js'
import { buildActionTable, uploadRules } from '../../src/editor/action-table.js'
import { createLimiters } from '../../src/limits/limiter.js'
import { silentLogger } from '../../src/shared/log.js'
import { createMetrics } from '../../src/shared/metrics.js'
import { startUp } from '../../src/start-up.js'
import type { UploadDeps } from '../../src/uploads/finish.js'
import { createUnfinishedUploads } from '../../src/uploads/unfinished.js'

/**
 * A second node of a running server's deployment: the same config, database and storage,
 * opened again in this process, with what the ending needs. Closed after the test.
 */
export async function secondNode(t: TestContext, config: ServerConfig): Promise<UploadDeps> {
  const opened = await startUp(
    { ...config, formula: { ...config.formula, enabled: false } },
    { log: silentLogger, metrics: createMetrics(), env: {} },
  )
  t.after(() => opened.close())
  const metrics = createMetrics()
  return {
    config,
    rules: uploadRules(buildActionTable(config.editor)),
    admission: createAdmission({
      config,
      files: opened.store.files,
      uploads: opened.store.uploads,
      gate: serverUploadGate(config, metrics, opened.limiters),
    }),
    storage: opened.storage,
    files: opened.store.files,
    uploads: opened.store.uploads,
    events: opened.events,
    images: opened.images,
    log: silentLogger,
    auth: createAuthenticator({
      settings: config.auth,
      mode: resolveAuthMode(config.auth, false),
      throttle: failureThrottle(createLimiters(null), config.auth.failuresPerMinute),
      log: silentLogger,
    }),
    unfinished: createUnfinishedUploads(),
  }
}

/** A ledger row as a resumable upload of `owner` would create it, due in a day. */
export function newUpload(o: Partial<NewUpload> = {}): NewUpload {
  const id = randomBytes(16).toString('base64url')
  return {
    id,
    via: 'tus',
    owner: 'alice',
    client: 'user:alice',
    category: 'video',
    originalName: 'clip.mp4',
    size: 1_000,
    storeRef: id,
    expiresAt: Date.now() + 86_400_000,
    ...o,
  }
}
