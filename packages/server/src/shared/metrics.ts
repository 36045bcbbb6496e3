import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import { isUeError } from './errors.js'

/** How an upload's wait for a slot ended. */
export type QueueOutcome = 'admitted' | 'timeout' | 'gone'
/** Which per-client upload limit refused an upload. */
export type UploadLimit = 'per_minute' | 'queue_full' | 'queue_wait'
/** How one webhook delivery attempt ended; `gave_up`: failed past the event's longest age. */
export type WebhookOutcome = 'delivered' | 'failed' | 'gave_up'

/**
 * What the handlers report. Label values come from the configured action names, error codes
 * and fixed words only, never from request text, so a client cannot blow up the series count.
 */
export interface Metrics {
  /** One editor request, by action name (or `unknown`) and outcome (`SUCCESS` or a code). */
  editorRequest(action: string, outcome: string, seconds: number): void
  /** A refusal answered by the editor or the materials API. */
  refused(area: 'editor' | 'materials', code: string): void
  /** Bytes stored by a successful upload or capture. */
  stored(action: string, bytes: number): void
  /** One catch source, by outcome (`SUCCESS` or a code). */
  caught(outcome: string): void
  /** An upload (upload, scrawl, catch) admitted; call the result when it ends. */
  uploadStarted(): () => void
  /** An upload waiting in its client's queue for a slot; call the result when the wait ends. */
  uploadQueued(): (outcome: QueueOutcome) => void
  /** An upload refused by a per-client limit (also counted under `refused`). */
  uploadLimited(limit: UploadLimit): void
  /** Any request the server answered, by route, method and HTTP status. */
  httpRequest(route: string, method: string, status: number, seconds: number): void
  /** One webhook delivery attempt, by event type and outcome. */
  webhookDelivery(type: string, outcome: WebhookOutcome): void
  /** An in-process event handler (`on`) that threw or rejected, by event type. */
  eventHandlerFailed(type: string): void
  /**
   * A failed write of the server's own beside the driver's (the temp spool, a re-encoded
   * image, tus's store), by a fixed operation name.
   */
  dependencyFailed(dependency: Dependency, operation: string): void
}

/** What `ueditor_dependency_errors_total` counts failures of. */
export type Dependency = 'database' | 'storage'

export const noMetrics: Metrics = {
  editorRequest() {},
  refused() {},
  stored() {},
  caught() {},
  uploadStarted: () => () => {},
  uploadQueued: () => () => {},
  uploadLimited() {},
  httpRequest() {},
  webhookDelivery() {},
  eventHandlerFailed() {},
  dependencyFailed() {},
}

export interface MetricsRegistry extends Metrics {
  readonly contentType: string
  /** The Prometheus text exposition of every metric. */
  render(): Promise<string>
  /** Wraps an image processor so each `process` call is timed and its queue is watched. */
  timeImages<T extends { process(...args: never[]): Promise<unknown>; readonly waiting?: number }>(
    processor: T,
  ): T
  /** Wraps a driver or repository so each rejected call that is not a refusal is counted. */
  countFailures<T extends object>(dependency: Dependency, target: T): T
}

const STORAGE_CODES: ReadonlySet<string> = new Set(['UE_STORAGE_FULL', 'UE_STORAGE_FAILED'])
const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/** One registry per server, so several servers in one process never share counters. */
export function createMetrics(): MetricsRegistry {
  const registry = new Registry()
  const registers = [registry]
  const editorRequests = new Counter({
    name: 'ueditor_editor_requests_total',
    help: 'Editor endpoint requests by action and outcome (SUCCESS or an error code)',
    labelNames: ['action', 'outcome'],
    registers,
  })
  const editorSeconds = new Histogram({
    name: 'ueditor_editor_request_duration_seconds',
    help: 'Time to answer an editor request (to the answer, not its last byte)',
    labelNames: ['action', 'outcome'],
    buckets: SECONDS,
    registers,
  })
  const refusals = new Counter({
    name: 'ueditor_refusals_total',
    help: 'Refusals answered, by area and error code',
    labelNames: ['area', 'code'],
    registers,
  })
  const storedBytes = new Counter({
    name: 'ueditor_stored_bytes_total',
    help: 'Bytes stored by uploads and captures, by action',
    labelNames: ['action'],
    registers,
  })
  const catchSources = new Counter({
    name: 'ueditor_catch_sources_total',
    help: 'Remote images asked for by catch, by outcome (SUCCESS or an error code)',
    labelNames: ['outcome'],
    registers,
  })
  const uploadsInFlight = new Gauge({
    name: 'ueditor_uploads_in_flight',
    help: 'Uploads, scrawls and captures being handled now',
    registers,
  })
  const uploadsWaiting = new Gauge({
    name: 'ueditor_upload_queue_waiting',
    help: 'Uploads waiting in their client queue for an upload slot now',
    registers,
  })
  const uploadWaits = new Counter({
    name: 'ueditor_upload_queue_total',
    help: 'Uploads that waited for a slot, by how the wait ended (admitted, timeout, gone)',
    labelNames: ['outcome'],
    registers,
  })
  const uploadLimits = new Counter({
    name: 'ueditor_upload_limit_refusals_total',
    help: 'Uploads refused by a per-client limit (per_minute, queue_full, queue_wait)',
    labelNames: ['limit'],
    registers,
  })
  const httpRequests = new Counter({
    name: 'ueditor_http_requests_total',
    help: 'Requests answered, by route, method and HTTP status',
    labelNames: ['route', 'method', 'status'],
    registers,
  })
  const httpSeconds = new Histogram({
    name: 'ueditor_http_request_duration_seconds',
    help: 'Time to answer a request (to the answer, not its last byte), by route',
    labelNames: ['route'],
    buckets: SECONDS,
    registers,
  })
  const imageSeconds = new Histogram({
    name: 'ueditor_image_pipeline_duration_seconds',
    help: 'Time spent checking and re-encoding one image, by outcome',
    labelNames: ['outcome'],
    buckets: SECONDS,
    registers,
  })
  let imagesWaiting = (): number => 0
  new Gauge({
    name: 'ueditor_image_queue_waiting',
    help: 'Images waiting for a decode slot now',
    registers,
    collect() {
      this.set(imagesWaiting())
    },
  })
  const dependencyErrors = new Counter({
    name: 'ueditor_dependency_errors_total',
    help: 'Failed calls to the database or the storage (driver, temp spool, tus), by operation',
    labelNames: ['dependency', 'operation'],
    registers,
  })
  const webhookDeliveries = new Counter({
    name: 'ueditor_webhook_deliveries_total',
    help: 'Webhook delivery attempts, by event type and outcome (delivered, failed, gave_up)',
    labelNames: ['type', 'outcome'],
    registers,
  })
  const eventHandlerFailures = new Counter({
    name: 'ueditor_event_handler_failures_total',
    help: 'In-process event handlers that threw or rejected, by event type',
    labelNames: ['type'],
    registers,
  })

  let processMetrics = false
  return {
    contentType: registry.contentType,
    async render() {
      // Started on the first scrape: the collectors keep observers for the process' lifetime.
      if (!processMetrics) {
        processMetrics = true
        collectDefaultMetrics({ register: registry })
      }
      return registry.metrics()
    },
    editorRequest(action, outcome, seconds) {
      editorRequests.inc({ action, outcome })
      editorSeconds.observe({ action, outcome }, seconds)
    },
    refused(area, code) {
      refusals.inc({ area, code })
    },
    stored(action, bytes) {
      if (bytes > 0) storedBytes.inc({ action }, bytes)
    },
    caught(outcome) {
      catchSources.inc({ outcome })
    },
    uploadStarted() {
      uploadsInFlight.inc()
      let ended = false
      return () => {
        if (ended) return
        ended = true
        uploadsInFlight.dec()
      }
    },
    uploadQueued() {
      uploadsWaiting.inc()
      let ended = false
      return (outcome) => {
        if (ended) return
        ended = true
        uploadsWaiting.dec()
        uploadWaits.inc({ outcome })
      }
    },
    uploadLimited(limit) {
      uploadLimits.inc({ limit })
    },
    httpRequest(route, method, status, seconds) {
      const m = METHODS.has(method) ? method : 'OTHER'
      httpRequests.inc({ route, method: m, status: String(status) })
      httpSeconds.observe({ route }, seconds)
    },
    webhookDelivery(type, outcome) {
      webhookDeliveries.inc({ type, outcome })
    },
    eventHandlerFailed(type) {
      eventHandlerFailures.inc({ type })
    },
    dependencyFailed(dependency, operation) {
      dependencyErrors.inc({ dependency, operation })
    },
    timeImages(processor) {
      imagesWaiting = () => processor.waiting ?? 0
      const process = processor.process.bind(processor) as (...a: unknown[]) => Promise<unknown>
      return Object.assign(Object.create(processor) as typeof processor, {
        process: async (...args: unknown[]) => {
          const end = imageSeconds.startTimer()
          try {
            const out = await process(...args)
            end({ outcome: 'SUCCESS' })
            return out
          } catch (e) {
            end({ outcome: isUeError(e) ? e.code : 'UE_INTERNAL' })
            // The re-encoded copy is written to the temp folder: a write that failed counts.
            if (isUeError(e) && STORAGE_CODES.has(e.code))
              dependencyErrors.inc({ dependency: 'storage', operation: 'image' })
            throw e
          }
        },
      })
    },
    countFailures(dependency, target) {
      return new Proxy(target, {
        get(obj, prop, receiver) {
          const value = Reflect.get(obj, prop, receiver) as unknown
          if (typeof value !== 'function' || typeof prop !== 'string') return value
          return (...args: unknown[]) => {
            const out = (value as (...a: unknown[]) => unknown).apply(obj, args)
            if (!(out instanceof Promise)) return out
            return out.catch((e: unknown) => {
              // A refusal (a missing key, a conflict) is an answer; a 5xx is a failure.
              if (!isUeError(e) || e.status >= 500)
                dependencyErrors.inc({ dependency, operation: prop })
              throw e
            })
          }
        },
      })
    },
  }
}
