import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import { Agent, request } from 'undici'
import type { ClaimedEntry, Outbox } from '../db/outbox.js'
import type { Metrics } from '../shared/metrics.js'
import type { Logger } from '../shared/types.js'
import { signatureOf } from './signature.js'

export interface WebhookSettings {
  url: string
  secret: string
  timeoutMs: number
  retryBaseMs: number
  retryMaxMs: number
  maxAgeMs: number
  pollMs: number
  concurrency: number
}

/** This node's delivery loop: `wake` after a commit, `close` on shutdown. */
export interface WebhookWorker {
  wake(): void
  close(): Promise<void>
}

/**
 * Delivers the outbox to the webhook, on every node: claims due events with a lease, posts
 * each once, deletes it when the receiver answers 2xx, else sets its next attempt after an
 * exponential back-off with jitter; an event still failing past `maxAgeMs` is given up. Between
 * wakes it polls every `pollMs`, which is how retries and events another node (or the CLI)
 * committed are found. A node that dies mid-delivery leaves a lease that expires, and the event
 * is delivered again: at least once, with its id to deduplicate.
 */
export function startWebhookWorker(o: {
  outbox: Outbox
  settings: WebhookSettings
  log: Logger
  metrics?: Metrics | undefined
}): WebhookWorker {
  const { outbox, settings: s, log, metrics } = o
  const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
  // Long enough that a lease never runs out while its attempt may still be answered.
  const leaseMs = 2 * s.timeoutMs + 10_000
  const agent = new Agent({ connect: { timeout: s.timeoutMs }, keepAliveTimeout: 4_000 })
  const attempts = new Set<AbortController>()
  let closed = false
  let running: Promise<void> | undefined
  let again = false
  let timer: NodeJS.Timeout | undefined
  let failingToClaim = false

  const wake = () => {
    if (closed) return
    if (running) {
      again = true
      return
    }
    clearTimeout(timer)
    running = drain().finally(() => {
      running = undefined
      if (closed) return
      timer = setTimeout(wake, s.pollMs)
      timer.unref()
    })
  }

  /** Claims and delivers until nothing is due (and nothing was committed meanwhile). */
  async function drain(): Promise<void> {
    do {
      again = false
      for (;;) {
        if (closed) return
        let batch: ClaimedEntry[]
        try {
          batch = await outbox.claim({ owner, now: Date.now(), leaseMs, limit: s.concurrency })
          if (failingToClaim) log.info({}, 'webhook outbox readable again')
          failingToClaim = false
        } catch (err) {
          // Once per outage, not once per poll.
          if (!failingToClaim) log.error({ err }, 'cannot read the webhook outbox; retrying')
          failingToClaim = true
          return
        }
        if (batch.length === 0) break
        await Promise.all(batch.map((entry) => deliver(entry)))
      }
    } while (again && !closed)
  }

  async function deliver(entry: ClaimedEntry): Promise<void> {
    const failure = await post(entry)
    const fields = { eventId: entry.eventId, type: entry.type, attempt: entry.attempt }
    try {
      if (failure === undefined) {
        await outbox.remove(entry.id)
        metrics?.webhookDelivery(entry.type, 'delivered')
        log.debug(fields, 'webhook delivered')
        return
      }
      const now = Date.now()
      if (closed) {
        // Cut short by the shutdown: free at once for any node, this attempt aside.
        await outbox.retryAt(entry.id, { owner, dueAt: now, error: failure })
        return
      }
      if (now - entry.createdAt >= s.maxAgeMs) {
        await outbox.remove(entry.id)
        metrics?.webhookDelivery(entry.type, 'gave_up')
        log.error(
          { ...fields, error: failure, event: entry.body },
          'webhook event given up: still failing past webhooks.maxAgeMs',
        )
        return
      }
      const delay = backOff(entry.attempt, s)
      await outbox.retryAt(entry.id, { owner, dueAt: now + delay, error: failure })
      metrics?.webhookDelivery(entry.type, 'failed')
      log.warn({ ...fields, error: failure, retryInMs: delay }, 'webhook delivery failed')
    } catch (err) {
      // The lease runs out and the event is tried again, by this node or another.
      log.error({ ...fields, err }, 'cannot settle a webhook delivery in the outbox')
    }
  }

  /** One POST; undefined when the receiver took it (2xx), else why not. */
  async function post(entry: ClaimedEntry): Promise<string | undefined> {
    const attempt = new AbortController()
    attempts.add(attempt)
    const deadline = setTimeout(() => attempt.abort(), s.timeoutMs)
    try {
      const answer = await request(s.url, {
        method: 'POST',
        dispatcher: agent,
        signal: attempt.signal,
        headersTimeout: s.timeoutMs,
        bodyTimeout: s.timeoutMs,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'ueditor-backend-webhook',
          'x-ueditor-event': entry.type,
          'x-ueditor-delivery': randomUUID(),
          'x-ueditor-signature': signatureOf(s.secret, entry.body),
        },
        body: entry.body,
      })
      await answer.body.dump()
      const { statusCode } = answer
      return statusCode >= 200 && statusCode < 300 ? undefined : `answered HTTP ${statusCode}`
    } catch (err) {
      if (closed) return 'stopped by the server shutting down'
      if (attempt.signal.aborted) return `no answer within ${s.timeoutMs} ms`
      return describe(err)
    } finally {
      clearTimeout(deadline)
      attempts.delete(attempt)
    }
  }

  timer = setTimeout(wake, 0)
  timer.unref()
  log.info({ webhook: new URL(s.url).origin }, 'webhook delivery on')
  return {
    wake,
    async close() {
      if (closed) return
      closed = true
      clearTimeout(timer)
      for (const attempt of attempts) attempt.abort()
      await running
      await agent.destroy()
    },
  }
}

/** Doubles per attempt up to the cap; a random half of it, so failed nodes do not retry in step. */
export function backOff(attempt: number, s: Pick<WebhookSettings, 'retryBaseMs' | 'retryMaxMs'>) {
  const full = Math.min(s.retryMaxMs, s.retryBaseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 40))
  return Math.round(full / 2 + Math.random() * (full / 2))
}

function describe(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown } }
  const code = e?.cause?.code ?? e?.code
  const message = typeof e?.message === 'string' ? e.message : String(err)
  return typeof code === 'string' ? `${code}: ${message}` : message
}
