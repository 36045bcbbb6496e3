import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { withCors } from '../../src/http/cors.js'
import { observe } from '../../src/http/observe.js'
import { silentLogger } from '../../src/shared/log.js'
import { createMetrics } from '../../src/shared/metrics.js'
import { png } from '../helpers/fixtures.js'
import { startTestServer } from '../helpers/start-server.js'
import { test } from '../helpers/test.js'

const ORIGIN = 'https://editor.example'

test('a preflight from an allowed origin is answered with the UEditor header set', async (t) => {
  const srv = await startTestServer(t, { http: { corsOrigins: [ORIGIN] } })
  const res = await fetch(srv.action('image'), {
    method: 'OPTIONS',
    headers: {
      Origin: ORIGIN,
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'authorization,x_requested_with',
    },
  })
  assert.equal(res.status, 204)
  assert.equal(res.headers.get('access-control-allow-origin'), ORIGIN)
  const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase()
  for (const h of ['authorization', 'content-type', 'x-requested-with', 'x_requested_with'])
    assert.ok(allowed.includes(h), h)
  assert.equal(res.headers.get('access-control-allow-credentials'), null)
  assert.match(res.headers.get('vary') ?? '', /Origin/)
})

test('an origin outside the allow-list gets no CORS headers, on preflight or request', async (t) => {
  const srv = await startTestServer(t, { http: { corsOrigins: [ORIGIN] } })
  for (const origin of ['https://evil.test', 'null', `${ORIGIN}.evil.test`]) {
    const pre = await fetch(srv.action('image'), {
      method: 'OPTIONS',
      headers: { Origin: origin, 'Access-Control-Request-Method': 'POST' },
    })
    assert.equal(pre.headers.get('access-control-allow-origin'), null, origin)
    const res = await fetch(srv.action('config'), { headers: { Origin: origin } })
    assert.equal(res.headers.get('access-control-allow-origin'), null, origin)
  }
})

test('an actual request from an allowed origin gets its origin echoed, never *', async (t) => {
  const srv = await startTestServer(t, { http: { corsOrigins: [ORIGIN] } })
  const res = await fetch(srv.action('config'), { headers: { Origin: ORIGIN } })
  assert.equal(res.headers.get('access-control-allow-origin'), ORIGIN)
  assert.equal((await res.json()).imageActionName, 'image')
})

test('a cross-origin upload gets an absolute URL from publicUrl and the CORS header it needs', async (t) => {
  const srv = await startTestServer(t, {
    http: { corsOrigins: [ORIGIN] },
    publicUrl: 'https://ue.example.com/uploads/',
  })
  const form = new FormData()
  form.append('upfile', new Blob([new Uint8Array(png())], { type: 'image/png' }), 'a.png')
  const res = await fetch(srv.action('image'), {
    method: 'POST',
    body: form,
    headers: { Origin: ORIGIN },
  })
  assert.equal(res.headers.get('access-control-allow-origin'), ORIGIN)
  const up = await res.json()
  assert.equal(up.state, 'SUCCESS')
  assert.match(up.url, /^https:\/\/ue\.example\.com\/uploads\/image\/\d{8}\/[0-9a-z]+\.png$/)
  const path = new URL(up.url).pathname
  assert.equal((await fetch(`${srv.url}${path}`)).status, 200)
})

test('a fetched answer, whose headers cannot change, gets the CORS headers and the request id on a copy that keeps its status, status text and body', async (t) => {
  const upstream = createServer((_req, res) => {
    res.writeHead(202, 'Accepted Later', { 'content-type': 'text/plain', 'x-upstream': '1' })
    res.end('from upstream')
  })
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r))
  t.after(() => new Promise((r) => upstream.close(r)))
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/`
  const handler = observe(
    withCors(() => fetch(url), [ORIGIN]),
    { log: silentLogger, metrics: createMetrics(), routeOf: () => 'other' },
  )
  const res = await handler(
    new Request('http://127.0.0.1/x', { headers: { Origin: ORIGIN, 'X-Request-Id': 'req-1' } }),
  )
  assert.equal(res.status, 202)
  assert.equal(res.statusText, 'Accepted Later')
  assert.equal(res.headers.get('access-control-allow-origin'), ORIGIN)
  assert.equal(res.headers.get('vary'), 'Origin')
  assert.equal(res.headers.get('x-request-id'), 'req-1')
  assert.equal(res.headers.get('x-upstream'), '1')
  assert.equal(await res.text(), 'from upstream')
})
