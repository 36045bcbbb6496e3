import assert from 'node:assert/strict'
import { test } from 'node:test'
import { png } from '../helpers/fixtures.js'
import { startTestServer } from '../helpers/start-server.js'

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
