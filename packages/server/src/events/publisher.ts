import type { Outbox } from '../db/outbox.js'
import type { DbTransaction, Within } from '../db/types.js'
import { UeError } from '../shared/errors.js'
import type { Metrics } from '../shared/metrics.js'
import type { Logger } from '../shared/types.js'
import { EVENT_TYPES, type EventHandlers, subjectOf, type UeditorEvent } from './types.js'

/**
 * How a change announces itself. `record` writes the event inside the change's transaction,
 * so it exists exactly when the change commits; `committed`, called after the commit, runs the
 * in-process handlers and wakes this node's webhook worker.
 */
export interface Events {
  /** True when events go to the outbox (a webhook is configured): changes need a transaction. */
  readonly recording: boolean
  record(trx: DbTransaction, event: UeditorEvent): Promise<void>
  committed(event: UeditorEvent): void
}

export const noEvents: Events = {
  recording: false,
  record: async () => {},
  committed() {},
}

export function createEvents(o: {
  /** Present when a webhook is configured; without one no outbox row is ever written. */
  outbox?: Outbox | undefined
  handlers?: EventHandlers | undefined
  log: Logger
  metrics?: Metrics | undefined
  /** Told after each commit that an event may be waiting (the webhook worker). */
  wake?: (() => void) | undefined
}): Events {
  const { outbox, handlers = {}, log, metrics, wake } = o
  return {
    recording: outbox !== undefined,
    async record(trx, event) {
      if (outbox === undefined) return
      await outbox.record(trx, {
        eventId: event.id,
        type: event.type,
        subject: subjectOf(event),
        body: JSON.stringify(event),
        createdAt: Date.parse(event.timestamp),
      })
    },
    committed(event) {
      if (outbox !== undefined) wake?.()
      const handler = handlers[event.type] as ((e: UeditorEvent) => unknown) | undefined
      if (handler === undefined) return
      // After the answer is on its way: neither a throw nor a slow promise reaches the request.
      setImmediate(() => {
        Promise.resolve()
          .then(() => handler(event))
          .catch((err: unknown) => {
            metrics?.eventHandlerFailed(event.type)
            log.error({ err, event: event.type, eventId: event.id }, 'event handler failed')
          })
      })
    },
  }
}

/** A misspelt event name would never be called: refused at start, naming it. */
export function checkHandlers(handlers: EventHandlers): void {
  const known = new Set<string>(EVENT_TYPES)
  const problems = Object.entries(handlers as Record<string, unknown>).flatMap(([name, fn]) =>
    !known.has(name)
      ? [`on.${name}: not an event (${EVENT_TYPES.join(', ')})`]
      : typeof fn !== 'function' && fn !== undefined
        ? [`on.${name}: must be a function`]
        : [],
  )
  if (problems.length > 0)
    throw new UeError('UE_CONFIG_INVALID', { detail: `\n  - ${problems.join('\n  - ')}` })
}

/** The `within` that records `event` in a change's transaction; none when nothing is recorded. */
export function recording(events: Events, event: UeditorEvent): Within | undefined {
  return events.recording ? (trx) => events.record(trx, event) : undefined
}
