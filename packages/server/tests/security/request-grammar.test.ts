import assert from 'node:assert/strict'
import { toNodeHandler } from '../../src/index.js'
import { hostApp } from '../helpers/host-app.js'
import { rawExchange } from '../helpers/hostile.js'
import { startTestServer } from '../helpers/start-server.js'
import { describe, type TestContext, test } from '../helpers/test.js'

/**
 * Request lines and headers built from the edges of the HTTP/1.1 grammar (RFC 9110/9112): method
 * tokens (including the ones fetch forbids), authorities that `Host` may or may not carry,
 * request-target forms, and header shapes. Every one must be answered (or the connection closed
 * by Node's parser) and the server must still answer afterwards.
 */
const TCHARS = "!#$%&'*+-.^_`|~"
const METHODS = [
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'DELETE',
  'OPTIONS',
  'PATCH',
  'TRACE',
  'TRACK',
  'CONNECT',
  'trace',
  'Connect',
  'PROPFIND',
  'M-SEARCH',
  'PURGE',
  'QUERY',
  'X',
  ...[...TCHARS].map((c) => `GET${c}`),
  'G'.repeat(200),
  'GET\u00e9',
  'GE T',
]

function hostValues(): string[] {
  const names = ['a', 'localhost', '127.0.0.1', '[::1]', 'xn--fsq', 'a.b.c.d.e', 'ä', '%41']
  const ports = ['', ':', ':0', ':80', ':65535', ':65536', ':99999', ':-1', ':b', '::']
  const odd = [
    '',
    ' ',
    'a b',
    'a/b',
    'a?b',
    'a#b',
    'a@b',
    'a\\b',
    '[zz]',
    '[::1',
    '::1]',
    '[::ffff:127.0.0.1]:80',
    '1.2.3.4.5',
    '0x7f.1',
    'a'.repeat(4000),
    'a..b',
    '.',
  ]
  return [...names.flatMap((n) => ports.map((p) => `${n}${p}`)), ...odd]
}

function targets(): string[] {
  const absolute = ['http', 'https', 'HTTP', 'ftp', 'javascript', 'file', 'ws'].flatMap(
    (scheme) => [`${scheme}://a/healthz`, `${scheme}://[/`, `${scheme}:/healthz`],
  )
  return [
    '/',
    '*',
    '/healthz',
    '//healthz',
    '/%',
    '/%zz',
    '/%00',
    '/?%',
    '/ueditor?action=config&&',
    '/ueditor?action=%ff',
    '/ueditor?action=config&callback=%3Cscript%3E',
    '/a\\b',
    '/..%2f..%2fetc%2fpasswd',
    '/uploads/..%5c..%5c',
    `/${'a'.repeat(8000)}`,
    'healthz',
    ':x',
    '?',
    '#',
    'http://[::1]:80/ueditor?action=config',
    'http://a:b/',
    'http://%zz/',
    'http:',
    'http://',
    ...absolute,
  ]
}

const HEADER_SHAPES = [
  'X-A: \x01',
  'X-A: \x7f',
  'X-A: ä',
  'X-A:',
  'X-A:    ',
  'Content-Length: 0',
  'Transfer-Encoding: identity',
  'Origin: null',
  'Cookie: a=b; ; =; ;;',
  'Accept: */*, ;q=',
  'Authorization: Bearer',
  `X-Long: ${'a'.repeat(8000)}`,
  ...Array.from({ length: 90 }, (_, i) => `X-H${i}: ${i}`),
]

interface Case {
  label: string
  text: string
}

function cases(): Case[] {
  const line = (method: string, target: string, host: string | null, extra: string[] = []) =>
    [
      `${method} ${target} HTTP/1.1`,
      ...(host === null ? [] : [`Host: ${host}`]),
      ...extra,
      'Connection: close',
      '',
      '',
    ].join('\r\n')
  return [
    ...METHODS.map((m) => ({ label: `method ${m.slice(0, 20)}`, text: line(m, '/healthz', 'a') })),
    ...hostValues().map((h) => ({
      label: `host ${h.slice(0, 20)}`,
      text: line('GET', '/ueditor?action=config', h),
    })),
    { label: 'no host', text: line('GET', '/healthz', null) },
    { label: 'two hosts', text: line('GET', '/healthz', 'a', ['Host: a:b']) },
    ...targets().map((u) => ({ label: `target ${u.slice(0, 30)}`, text: line('GET', u, 'a') })),
    ...targets().map((u) => ({ label: `POST ${u.slice(0, 30)}`, text: line('POST', u, 'a:b') })),
    ...HEADER_SHAPES.map((h) => ({
      label: `header ${h.slice(0, 20)}`,
      text: line('GET', '/ueditor?action=config', 'a', [h]),
    })),
    { label: 'HTTP/1.0 no host', text: 'GET /healthz HTTP/1.0\r\n\r\n' },
    { label: 'HTTP/0.9', text: 'GET /healthz\r\n\r\n' },
    { label: 'HTTP/2.0 line', text: 'GET /healthz HTTP/2.0\r\nHost: a\r\n\r\n' },
    { label: 'bare LF', text: 'GET /healthz HTTP/1.1\nHost: a\n\n' },
    { label: 'garbage', text: '\x00\x01\x02\r\n\r\n' },
  ]
}

async function survivesEveryCase(t: TestContext, base: string) {
  const peer = { url: base }
  for (const c of cases()) {
    const exchange = await rawExchange(peer, [c.text], { maxMs: 5_000 })
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(exchange.text)?.[1]
    // Either Node's parser closed the connection, or we answered; never with a 5xx.
    assert.ok(status !== undefined || exchange.closedByServer, `${c.label}: no answer, not closed`)
    if (status !== undefined) assert.ok(Number(status) < 500, `${c.label}: status ${status}`)
    const health = await fetch(`${base}/healthz`).catch((e: unknown) => e as Error)
    assert.ok(health instanceof Response, `${c.label}: the server stopped answering`)
    await health.text()
  }
  t.diagnostic(`${cases().length} request shapes`)
}

describe('S43: requests at the edges of the HTTP grammar', () => {
  test('the standalone server answers every shape and keeps serving', async (t) => {
    const srv = await startTestServer(t)
    await survivesEveryCase(t, srv.url)
  })

  test('a host app that mounts toNodeHandler survives every shape too', async (t) => {
    const base = await hostApp(t, (ue) => toNodeHandler(ue.fetch))
    await survivesEveryCase(t, base)
  })

  test('TRACE is refused with 405 and a request target that is not a URL with 400', async (t) => {
    const srv = await startTestServer(t)
    const trace = await rawExchange(srv, ['TRACE / HTTP/1.1\r\nHost: a\r\n\r\n'])
    assert.match(trace.text, /^HTTP\/1\.1 405 /)
    assert.match(trace.text, /"code":"UE_METHOD_NOT_ALLOWED"/)
    const target = await rawExchange(srv, ['GET http://[/ HTTP/1.1\r\nHost: a\r\n\r\n'])
    assert.match(target.text, /^HTTP\/1\.1 400 /)
    assert.match(target.text, /"code":"UE_REQUEST_INVALID"/)
    const host = await rawExchange(srv, [
      'GET /healthz HTTP/1.1\r\nHost: a:b\r\nConnection: close\r\n\r\n',
    ])
    assert.match(host.text, /^HTTP\/1\.1 200 /)
  })

  test('CONNECT is answered with a readable 405 instead of a dropped connection', async (t) => {
    const srv = await startTestServer(t)
    const tunnel = await rawExchange(srv, ['CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n'])
    assert.match(tunnel.text, /^HTTP\/1\.1 405 /)
    assert.match(tunnel.text, /\r\nx-content-type-options: nosniff\r\n/i)
    assert.match(tunnel.text, /"code":"UE_METHOD_NOT_ALLOWED"/)
    assert.ok(tunnel.closedByServer, 'the tunnel connection stayed open')
    assert.equal((await fetch(`${srv.url}/healthz`)).status, 200)
  })
})
