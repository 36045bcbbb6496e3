import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { AuthorizeHook } from '../../src/auth/types.js'
import { PDF } from '../helpers/fixtures.js'
import { multipartBody } from '../helpers/multipart.js'
import { sendFrom } from '../helpers/post-from.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, type TestContext, test } from '../helpers/test.js'

/** What the session service saw of one request. */
interface Seen {
  method: string
  path: string
  cookie: string | undefined
  bytes: number
}

/** A host app's session service on loopback: names the user of the `session` cookie. */
async function startSessionService(t: TestContext) {
  const seen: Seen[] = []
  const server = createServer((req, res) => {
    let bytes = 0
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length
    })
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        path: req.url ?? '',
        cookie: req.headers.cookie,
        bytes,
      })
      const user = /(?:^|;\s*)session=(\w+)/.exec(req.headers.cookie ?? '')?.[1]
      res.writeHead(user ? 200 : 401, { 'content-type': 'application/json' })
      res.end(JSON.stringify(user ? { user } : {}))
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.after(() => new Promise((r) => server.close(r)))
  return { host: `127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

/** A hook that asks the session service, by passing it the request (or what `pick` makes of it). */
function sessionHook(pick: (request: Request) => Request = (r) => r): AuthorizeHook {
  return async (request) => {
    const answer = await fetch(pick(request))
    return answer.ok ? ((await answer.json()) as { user: string }) : null
  }
}

/**
 * A request to the UEditor server whose `Host` names another origin: the server builds the
 * request URL from it, so a hook that fetches the request itself reaches that origin.
 */
async function sendWithHost(
  srv: TestServer,
  o: {
    host: string
    path: string
    method?: string
    headers?: Record<string, string>
    body?: Buffer
  },
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await sendFrom(new URL(o.path, srv.url).href, {
    method: o.method,
    headers: { ...o.headers, host: o.host },
    body: o.body,
  })
  return {
    status: res.status,
    json: JSON.parse(res.body.toString()) as Record<string, unknown>,
  }
}

/** A PDF of `size` bytes: several socket reads, so a body read twice or half shows. */
function bigPdf(size: number): Buffer {
  return Buffer.concat([PDF, Buffer.alloc(size - PDF.length, 0x20)])
}

function uploadParts(file: Buffer) {
  return multipartBody([
    { name: 'file', value: file, filename: 'notes.pdf', contentType: 'application/pdf' },
  ])
}

async function storedBytes(srv: TestServer, url: string): Promise<Buffer> {
  const res = await fetch(`${srv.url}${url}`)
  assert.equal(res.status, 200)
  return Buffer.from(await res.arrayBuffer())
}

describe('what an authorize hook may do with its request', () => {
  test('it is a Request: headers, a clone and new Request(request) keep its method, URL and headers', async (t) => {
    const checks: Record<string, unknown>[] = []
    const srv = await startTestServer(
      t,
      {},
      {
        authorize: async (request) => {
          const copy = new Request(request)
          const clone = request.clone()
          checks.push({
            isRequest: request instanceof Request,
            cookie: request.headers.get('cookie'),
            copy: [copy.method, copy.url, copy.headers.get('cookie'), copy.headers.get('x-app')],
            clone: [clone.method, clone.url, clone.headers.get('cookie')],
            body: await clone.text(),
          })
          return { user: 'alice' }
        },
      },
    )
    const url = srv.action('listFile', '&start=0&size=5')
    const res = await fetch(url, { headers: { cookie: 'session=alice', 'x-app': 'cms' } })
    assert.equal(((await res.json()) as { state: string }).state, 'SUCCESS')
    assert.deepEqual(checks, [
      {
        isRequest: true,
        cookie: 'session=alice',
        copy: ['GET', url, 'session=alice', 'cms'],
        clone: ['GET', url, 'session=alice'],
        body: '',
      },
    ])
  })

  test('it can be passed to fetch: a session service on loopback gets its method, path, query and cookie', async (t) => {
    const session = await startSessionService(t)
    const srv = await startTestServer(t, {}, { authorize: sessionHook() })
    const path = `${srv.ue.config.routes.editor}?action=listFile&start=0&size=5`
    const alice = await sendWithHost(srv, {
      host: session.host,
      path,
      headers: { cookie: 'session=alice' },
    })
    assert.equal(alice.json.state, 'SUCCESS')
    const nobody = await sendWithHost(srv, { host: session.host, path })
    assert.equal(nobody.json.code, 'UE_UNAUTHORIZED')
    assert.deepEqual(session.seen, [
      { method: 'GET', path, cookie: 'session=alice', bytes: 0 },
      { method: 'GET', path, cookie: undefined, bytes: 0 },
    ])
  })

  test('it may read or fetch a clone of an upload, which still stores every byte; fetching the request itself uses the body up', async (t) => {
    const session = await startSessionService(t)
    const file = bigPdf(600_000)
    const { body, contentType } = uploadParts(file)
    const read: number[] = []
    const reading = await startTestServer(
      t,
      {},
      {
        authorize: async (request) => {
          // A copy of a clone, as a host app's signature check might make it.
          read.push((await new Request(request.clone()).arrayBuffer()).byteLength)
          return { user: 'alice' }
        },
      },
    )
    const cloning = await startTestServer(t, {}, { authorize: sessionHook((r) => r.clone()) })
    const forwarding = await startTestServer(t, {}, { authorize: sessionHook() })
    const path = `${cloning.ue.config.routes.editor}?action=file`
    const send = (srv: TestServer) =>
      sendWithHost(srv, {
        host: session.host,
        path,
        method: 'POST',
        headers: { cookie: 'session=alice', 'content-type': contentType },
        body,
      })

    for (const srv of [reading, cloning]) {
      const stored = await send(srv)
      assert.equal(stored.json.state, 'SUCCESS', JSON.stringify(stored.json))
      assert.deepEqual(await storedBytes(srv, stored.json.url as string), file)
    }
    assert.deepEqual(read, [body.length])

    const refused = await send(forwarding)
    assert.equal(refused.json.code, 'UE_BODY_CONSUMED')
    assert.deepEqual(await forwarding.storedFiles(), [])
    assert.deepEqual(session.seen, [
      { method: 'POST', path, cookie: 'session=alice', bytes: body.length },
      { method: 'POST', path, cookie: 'session=alice', bytes: body.length },
    ])
  })
})
