export type { AuthorizedUser, AuthorizeHook } from './auth/types.js'
export { EDITOR_DEFAULTS } from './config/editor-defaults.js'
export { ENV_VARS } from './config/env-var-table.js'
export { loadConfig, type ServerConfig } from './config/load.js'
export type { EditorConfig, ServerConfigInput } from './config/schema.js'
export type {
  CategoryRecord,
  MaterialRecord,
  MaterialRepository,
} from './db/material-repo.js'
export { verifyWebhookSignature } from './events/signature.js'
export type {
  EventData,
  EventHandlers,
  EventType,
  FileDeletedReason,
  UeditorEvent,
  UeditorEventOf,
} from './events/types.js'
export type { MountableServer, Mounts } from './http/mounts.js'
export { type BridgeOptions, type NodeHandler, serveNode, toNodeHandler } from './http/node.js'
export { createUeditorServer, type UeditorOptions, type UeditorServer } from './server.js'
export { CODES, UeError, type UeErrorCode } from './shared/errors.js'
export type { ConnectionInfo, HostContext } from './shared/request-info.js'
export type { Category, FetchHandler, Logger } from './shared/types.js'
export { type RunningServer, startServer } from './standalone/serve.js'
export type { PutMeta, StorageDriver } from './storage/driver.js'
