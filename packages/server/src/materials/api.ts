import { type AuthSetup, createAuthenticator } from '../auth/authenticator.js'
import { isLoopbackHost } from '../auth/loopback.js'
import type { ServerConfig } from '../config/load.js'
import type { MaterialRepository } from '../db/material-repo.js'
import { UeError } from '../shared/errors.js'
import { lazyHandler, lazyOnce } from '../shared/lazy-handler.js'
import type { Metrics } from '../shared/metrics.js'
import { errorResponse } from '../shared/respond.js'
import type { FetchHandler, Logger } from '../shared/types.js'
import { createMaterialsAuth } from './auth.js'
import { seedDemoMaterials } from './seed.js'

export interface MaterialsApi {
  /** The HTTP API; with `basePath` paths are matched exactly below it, else by their end. */
  handler(basePath?: string): FetchHandler
}

/**
 * The materials service as configured: the server's auth layer plus the materials' own read
 * and admin tokens; 404 everywhere when disabled.
 */
export function createMaterialsApi(o: {
  config: ServerConfig
  repo: MaterialRepository
  log: Logger
  metrics?: Metrics
  auth: AuthSetup
}): MaterialsApi {
  const { materials, http } = o.config
  // Anonymous reads are a choice too: only in a mode none that was set.
  const noAuth = o.auth.mode.mode === 'none' && o.auth.mode.explicit
  const publicReads = noAuth && materials.tokens.length === 0 && isLoopbackHost(http.host)
  if (materials.enabled && noAuth && materials.tokens.length === 0 && !publicReads)
    o.log.warn(
      { host: http.host },
      'materials: no read token is configured and the server is not on loopback, so reads ' +
        'answer 401; set materials.tokens (UEDITOR_MATERIALS_TOKENS)',
    )
  const tokens = [
    ...materials.tokens.map((token) => ({ token, grant: { user: null, admin: false } })),
    ...materials.adminTokens.map((token) => ({ token, grant: { user: null, admin: true } })),
  ]
  const authorize = createMaterialsAuth({
    authenticator: createAuthenticator(o.auth, { tokens, checkInModeNone: true }),
    publicReads,
    corsOrigins: http.corsOrigins,
  })
  const disabled: FetchHandler = async () => errorResponse(new UeError('UE_NOT_FOUND'))
  // The routes, the service and their schemas load with the first materials request.
  const service = lazyOnce(async () =>
    (await import('./service.js')).createMaterialsService(o.repo),
  )
  return {
    handler: (basePath) =>
      materials.enabled
        ? lazyHandler(async () => {
            const { createMaterialsHandler } = await import('./routes.js')
            return createMaterialsHandler({
              service: await service(),
              authorize,
              maxBodyBytes: materials.maxBodyBytes,
              timeouts: http,
              log: o.log,
              ...(o.metrics ? { metrics: o.metrics } : {}),
              basePath,
            })
          })
        : disabled,
  }
}

/**
 * The demo materials are loaded once, on the start that creates the materials tables (a fresh
 * data folder), so deleting them later is final.
 */
export async function seedOnFirstStart(o: {
  config: ServerConfig
  repo: MaterialRepository
  createdTables: boolean
  log: Logger
}): Promise<void> {
  if (!o.createdTables || !o.config.materials.enabled || !o.config.materials.seed) return
  const summary = await seedDemoMaterials(o.repo)
  o.log.info(
    { categories: summary.categories.created, materials: summary.materials.created },
    'materials: loaded the demo materials (materials.seed: false turns this off)',
  )
}
