import type { Admission } from '../admission/admit.js'
import type { AiRelay } from '../ai/relay.js'
import type { Authenticator } from '../auth/authenticator.js'
import type { Actor } from '../auth/types.js'
import type { ServerConfig } from '../config/load.js'
import type { FileIndex } from '../db/types.js'
import type { UploadLedger } from '../db/upload-ledger.js'
import type { Events } from '../events/publisher.js'
import type { ImageProcessor } from '../images/processor.js'
import type { RemoteFetcher } from '../ingest/remote/fetch-image.js'
import type { Metrics } from '../shared/metrics.js'
import type { Logger } from '../shared/types.js'
import type { StorageDriver } from '../storage/driver.js'
import type { WordServices } from '../word/services.js'
import type { ActionTable } from './action-table.js'

/** What every action handler may use; built once by the composition root. */
export interface EditorDeps {
  config: ServerConfig
  table: ActionTable
  storage: StorageDriver
  files: FileIndex
  /** Announces stored and deleted files (in-process handlers, the webhook outbox). */
  events: Events
  /** Resumable and direct uploads until settled: their declared sizes count against the quota. */
  uploads: UploadLedger
  /** Checks and re-encodes every stored raster image (passthrough when disabled). */
  images: ImageProcessor
  /** The SSRF-guarded client the catch action fetches remote images with. */
  remote: RemoteFetcher
  log: Logger
  /** Request, refusal, byte and catch counters; none when absent. */
  metrics?: Metrics
  /** Who a request acts for (docs/auth.md). */
  auth: Authenticator
  /** The one admission every way of uploading goes through (`admission/`). */
  admission: Admission
  /** The AI relay, when `ai` is configured (docs/ai.md). */
  ai?: AiRelay | undefined
  /** `?action=uploadresult` (the uploads room answers it); unknown action when absent. */
  uploadResult?: ((ask: { id: string; actor: Actor; log: Logger }) => Promise<object>) | undefined
  /** `?action=wordimport`: unknown action when absent. */
  word?: WordServices | undefined
  /** True once the server is shutting down: every new request is refused with `UE_SHUTTING_DOWN`. */
  closing?: () => boolean
}

export interface ActionContext {
  request: Request
  url: URL
  deps: EditorDeps
  actor: Actor
}
