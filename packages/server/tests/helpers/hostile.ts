import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { eventually } from './eventually.js'
import type { TestServer } from './start-server.js'

/** What a hostile request must not change: stored files, temp files and the index. */
export interface Snapshot {
  stored: string[]
  temp: string[]
  images: number
  files: number
}

async function listingTotal(srv: TestServer, action: string): Promise<number> {
  const res = await fetch(srv.action(action, '&start=0&size=1'))
  return ((await res.json()) as { total: number }).total
}

export async function snapshot(srv: TestServer): Promise<Snapshot> {
  return {
    stored: await srv.storedFiles(),
    temp: await srv.tempFiles(),
    images: await listingTotal(srv, 'listImage'),
    files: await listingTotal(srv, 'listFile'),
  }
}

/** Storage, spool and index are exactly as before (temp files may take a moment to go). */
export async function assertUnchanged(
  srv: TestServer,
  before: Snapshot,
  label = '',
): Promise<void> {
  const after = await eventually(() => snapshot(srv), {
    until: (s) => s.temp.length === before.temp.length,
    what: 'as many temp files as before',
  })
  assert.deepEqual(after, before, `storage, temp files or index changed ${label}`)
}

/** The server keeps serving: `config` answers 200 with the editor's keys. */
export async function assertStillServes(srv: TestServer): Promise<void> {
  const res = await fetch(srv.action('config'))
  assert.equal(res.status, 200)
  const config = (await res.json()) as Record<string, unknown>
  assert.equal(typeof config.imageActionName, 'string')
}

/** A readable refusal never carries a stack trace or an internal path. */
export function assertNoLeak(srv: TestServer, text: string, label = ''): void {
  for (const secret of [srv.dataDir, tmpdir(), '/node_modules/', 'file://'])
    assert.ok(!text.includes(secret), `answer leaks ${secret} ${label}: ${text.slice(0, 200)}`)
  assert.doesNotMatch(text, /\n\s+at |Error: |ENOENT|EACCES/, `answer leaks a stack ${label}`)
}

export interface Refusal {
  status: number
  body: { state?: string; code?: string; error?: { code: string } } | null
  text: string
}

/**
 * Sends one hostile request and checks what every row of docs/security.md promises: a safe,
 * readable refusal, nothing stored or changed, and a server that still serves. A connection
 * the server closes instead of answering counts as a refusal when `mayClose` is set.
 */
export async function expectRefused(
  srv: TestServer,
  send: () => Promise<Response>,
  o: { codes?: readonly string[]; label?: string; mayClose?: boolean } = {},
): Promise<Refusal | 'closed'> {
  const label = o.label ?? ''
  const before = await snapshot(srv)
  let refusal: Refusal | 'closed'
  try {
    const res = await send()
    const text = await res.text()
    assertNoLeak(srv, text, label)
    const json = /json/.test(res.headers.get('content-type') ?? '')
    const body = json && text !== '' ? JSON.parse(text) : null
    refusal = { status: res.status, body, text }
    if (res.status === 200) {
      assert.ok(body && typeof body.state === 'string', `200 without a state ${label}`)
      assert.notEqual(body.state, 'SUCCESS', `accepted ${label}`)
    } else assert.ok(res.status >= 400 && res.status < 500, `status ${res.status} ${label}`)
    const code = body?.code ?? body?.error?.code
    if (o.codes) assert.ok(o.codes.includes(code), `code ${code} ${label}`)
  } catch (e) {
    if (!o.mayClose || !isConnectionError(e)) throw e
    refusal = 'closed'
  }
  await assertUnchanged(srv, before, label)
  await assertStillServes(srv)
  return refusal
}

function isConnectionError(e: unknown): boolean {
  return e instanceof TypeError && /fetch failed|terminated|other side closed/i.test(e.message)
}

/** `fetch` of a multipart body built by hand. */
export function postBody(
  srv: TestServer,
  action: string,
  body: Buffer | string,
  contentType: string,
  headers: Record<string, string> = {},
  query = '',
) {
  return fetch(srv.action(action, query), {
    method: 'POST',
    body: typeof body === 'string' ? body : new Uint8Array(body),
    headers: { 'Content-Type': contentType, ...headers },
  })
}

export interface RawExchange {
  /** Everything the server sent before it closed the connection or the time was up. */
  text: string
  closedByServer: boolean
}

/**
 * Writes raw bytes to the server (`chunks` one after another, `gapMs` apart) and collects the
 * answer until the server closes the connection, or `maxMs` has passed (then it is destroyed).
 */
export function rawExchange(
  srv: { url: string },
  chunks: (string | Buffer)[],
  o: { gapMs?: number; maxMs?: number; localAddress?: string } = {},
): Promise<RawExchange> {
  const { port } = new URL(srv.url)
  return new Promise((resolve) => {
    const received: Buffer[] = []
    let closedByServer = false
    let finished = false
    const socket: Socket = connect({
      port: Number(port),
      host: '127.0.0.1',
      ...(o.localAddress ? { localAddress: o.localAddress } : {}),
    })
    const finish = () => {
      if (finished) return
      finished = true
      clearTimeout(deadline)
      clearInterval(writer)
      socket.destroy()
      resolve({ text: Buffer.concat(received).toString('latin1'), closedByServer })
    }
    const deadline = setTimeout(finish, o.maxMs ?? 10_000)
    const pending = [...chunks]
    let writer: NodeJS.Timeout | undefined
    socket.on('connect', () => {
      const writeNext = () => {
        const next = pending.shift()
        if (next === undefined) return clearInterval(writer)
        if (!socket.destroyed) socket.write(next, () => {})
      }
      writeNext()
      writer = setInterval(writeNext, o.gapMs ?? 0)
    })
    socket.on('data', (d) => received.push(d))
    socket.on('end', () => {
      closedByServer = true
      finish()
    })
    socket.on('close', () => {
      closedByServer = closedByServer || !finished
      finish()
    })
    // A reset before our own deadline is the server dropping the connection too.
    socket.on('error', () => {
      closedByServer = closedByServer || !finished
      finish()
    })
  })
}

/** The JSON body of the first HTTP answer in a raw exchange, or null. */
export function firstJsonBody(text: string): { state?: string; code?: string } | null {
  const start = text.indexOf('\r\n\r\n')
  if (start < 0) return null
  // Chunked or not, the JSON answer sits on one line of its own.
  const match = /\{"[^\r\n]*\}/.exec(text.slice(start + 4))
  try {
    return match ? JSON.parse(match[0]) : null
  } catch {
    return null
  }
}
