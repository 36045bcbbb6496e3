import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { eventually } from './eventually.js'

// The host app's check, exactly as docs/events.md shows it (a test compares the two).
// --- verification snippet ---
function verifySignature(secret: string, rawBody: Buffer, header: string | undefined): boolean {
  const expected = Buffer.from(
    `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`,
  )
  const given = Buffer.from(header ?? '')
  return given.length === expected.length && timingSafeEqual(given, expected)
}
// --- end of verification snippet ---

export const VERIFICATION_SNIPPET = verifySignature.toString()

/** One POST as the receiver got it. */
export interface Delivery {
  verified: boolean
  event: { id: string; type: string; timestamp: string; data: Record<string, unknown> }
  headers: IncomingMessage['headers']
}

/** What the receiver does with a POST now: take it, answer 500, never answer, or not listen. */
export type ReceiverMode = 'accept' | 'fail' | 'hang' | 'down'

export interface WebhookReceiver {
  readonly url: string
  /** Every POST taken (answered 2xx), duplicates included, in arrival order. */
  readonly deliveries: Delivery[]
  /** POSTs answered 500. */
  readonly refused: number
  /** POSTs held without an answer, and how many of those the sender has since cut off. */
  readonly held: { count: number; cutOff: number }
  setMode(mode: ReceiverMode): Promise<void>
  /** Resolves once `count` deliveries were taken; rejects after `ms`. */
  waitFor(count: number, ms?: number): Promise<Delivery[]>
  close(): Promise<void>
}

/** A host app's webhook endpoint on 127.0.0.1: checks each signature as the docs show. */
export async function startWebhookReceiver(
  t: { after(fn: () => Promise<void>): void },
  secret: string,
  mode: ReceiverMode = 'accept',
): Promise<WebhookReceiver> {
  const deliveries: Delivery[] = []
  let refused = 0
  const held = { count: 0, cutOff: 0 }
  let current: ReceiverMode = mode
  let port = 0
  let server: Server | undefined

  const listen = async () => {
    const s = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        if (current === 'hang') {
          held.count++
          res.on('close', () => held.cutOff++)
          return
        }
        if (current === 'fail') {
          refused++
          res.writeHead(500).end('not now')
          return
        }
        const raw = Buffer.concat(chunks)
        const header = req.headers['x-ueditor-signature']
        const verified = verifySignature(
          secret,
          raw,
          typeof header === 'string' ? header : undefined,
        )
        deliveries.push({ verified, event: JSON.parse(raw.toString('utf8')), headers: req.headers })
        res.writeHead(verified ? 204 : 401).end()
      })
    })
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject)
      s.listen(port, '127.0.0.1', () => resolve())
    })
    port = (s.address() as AddressInfo).port
    server = s
  }
  const stop = async () => {
    const s = server
    server = undefined
    if (!s) return
    s.closeAllConnections()
    await new Promise<void>((resolve) => s.close(() => resolve()))
  }

  // Listen once to own a port, even when starting down: the URL must stay the same.
  await listen()
  if (mode === 'down') await stop()
  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${port}/hooks/ueditor`,
    deliveries,
    get refused() {
      return refused
    },
    held,
    async setMode(next) {
      current = next
      if (next === 'down') await stop()
      else if (!server) await listen()
    },
    async waitFor(count, ms = 20_000) {
      await eventually(() => deliveries.length, {
        until: (n) => n >= count,
        timeoutMs: ms,
        intervalMs: 10,
        what: `${count} webhook deliveries taken`,
      })
      return deliveries.slice(0, count)
    },
    close: stop,
  }
  t.after(stop)
  return receiver
}

/** Waits `ms`; for letting a worker's timers run while asserting nothing more arrives. */
export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
