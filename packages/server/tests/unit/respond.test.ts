import assert from 'node:assert/strict'
import { methodNotAllowed, shuttingDown, UeError } from '../../src/shared/errors.js'
import { messageFor } from '../../src/shared/messages.js'
import {
  errorParts,
  errorResponse,
  isValidCallback,
  jsonpResponse,
  jsonResponse,
  SerialisedJson,
  safeJson,
} from '../../src/shared/respond.js'
import { describe, test } from '../helpers/test.js'

/** The value a JSONP body passes to its callback, and the callback's name. */
function jsonpCall(body: string): { callback: string; value: unknown } {
  const m = /^\/\*\*\/([\w$]+)\((.*)\);$/s.exec(body)
  assert.ok(m, `not a JSONP call: ${body}`)
  return { callback: m[1] as string, value: JSON.parse(m[2] as string) }
}

describe('script-safe JSON', () => {
  test('<, >, &, U+2028 and U+2029 are written as escapes and the value reads back unchanged', () => {
    const value = { html: '</script><img src=x onerror=alert(1)>&amp;', lines: 'a\u2028b\u2029c' }
    const text = safeJson(value)
    assert.doesNotMatch(text, /[<>&\u2028\u2029]/)
    assert.match(text, /\\u003c\/script\\u003e/)
    assert.deepEqual(JSON.parse(text), value)
  })

  test('a serialised answer is written once and sent as it was written', () => {
    const once = new SerialisedJson({ imageUrl: '/u?a=1&b=<2>' })
    assert.equal(safeJson(once), once.text)
    assert.deepEqual(JSON.parse(once.text), { imageUrl: '/u?a=1&b=<2>' })
  })

  test('a JSON answer carries its status, nosniff, no-store and the extra headers', async () => {
    const res = jsonResponse({ a: '<b>' }, 201, { Location: '/x' })
    assert.equal(res.status, 201)
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8')
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff')
    assert.equal(res.headers.get('cache-control'), 'no-store')
    assert.equal(res.headers.get('location'), '/x')
    assert.equal(await res.text(), '{"a":"\\u003cb\\u003e"}')
  })

  test('a JSONP answer is a commented call of the callback with script-safe JSON', async () => {
    const res = jsonpResponse('bd__editor__k3j9x2', { state: 'SUCCESS', t: '</script>' })
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), 'application/javascript; charset=utf-8')
    const body = await res.text()
    assert.doesNotMatch(body, /<\/script>/)
    assert.deepEqual(jsonpCall(body), {
      callback: 'bd__editor__k3j9x2',
      value: { state: 'SUCCESS', t: '</script>' },
    })
  })

  test('only plain identifiers that are not prototype keys or eval are valid callbacks', () => {
    for (const name of ['cb', 'bd__editor__k3j9x2', '$jsonp_1', '_'])
      assert.ok(isValidCallback(name), name)
    for (const name of [
      '',
      'alert(1)//',
      'a.b',
      'x;y',
      '1abc',
      '__proto__',
      'constructor',
      'prototype',
      'eval',
      'Function',
      'a'.repeat(65),
    ])
      assert.ok(!isValidCallback(name), name)
  })
})

describe('a UeError as an answer', () => {
  test('the API shape is {error: {code, message}} in English, with the detail and the code status', async () => {
    const res = errorResponse(new UeError('UE_VALIDATION_FAILED', { detail: 'pageSize: <b>' }))
    assert.equal(res.status, 400)
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8')
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff')
    assert.equal(res.headers.get('cache-control'), 'no-store')
    const text = await res.text()
    assert.doesNotMatch(text, /[<>]/)
    assert.deepEqual(JSON.parse(text), {
      error: { code: 'UE_VALIDATION_FAILED', message: 'The request is invalid: pageSize: <b>' },
    })
  })

  test('the editor shape is {state, code} with the message in the configured language', async () => {
    const error = new UeError('UE_FILE_TOO_LARGE', { detail: 'internal detail' })
    const zh = errorResponse(error, { shape: 'editor', locale: 'zh-CN' })
    assert.deepEqual(await zh.json(), { state: '文件大小超出网站限制', code: 'UE_FILE_TOO_LARGE' })
    const en = errorResponse(error, { shape: 'editor', locale: 'en' })
    assert.deepEqual(await en.json(), {
      state: 'The file exceeds the size limit',
      code: 'UE_FILE_TOO_LARGE',
    })
  })

  test('the protocol status mode answers 200 and the http mode the code status', () => {
    const error = new UeError('UE_RATE_LIMITED')
    assert.equal(errorResponse(error, { shape: 'editor', statusMode: 'protocol' }).status, 200)
    assert.equal(errorResponse(error, { shape: 'editor', statusMode: 'http' }).status, 429)
    assert.equal(errorResponse(error).status, 429)
  })

  test('extra fields join the editor body and extra headers join the answer', async () => {
    const res = errorResponse(new UeError('UE_REMOTE_TOO_MANY'), {
      shape: 'editor',
      locale: 'en',
      statusMode: 'protocol',
      fields: { list: [{ state: 'x', code: 'UE_REMOTE_TOO_MANY', source: '' }] },
      headers: { Connection: 'close', 'Retry-After': '60' },
    })
    assert.equal(res.headers.get('connection'), 'close')
    assert.equal(res.headers.get('retry-after'), '60')
    assert.deepEqual(await res.json(), {
      state: 'Too many images in one capture request',
      code: 'UE_REMOTE_TOO_MANY',
      list: [{ state: 'x', code: 'UE_REMOTE_TOO_MANY', source: '' }],
    })
  })

  test('a valid callback makes the refusal JSONP, always 200 so the script runs', async () => {
    const res = errorResponse(new UeError('UE_FORBIDDEN'), {
      shape: 'editor',
      locale: 'en',
      statusMode: 'http',
      callback: 'cb',
    })
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), 'application/javascript; charset=utf-8')
    assert.deepEqual(jsonpCall(await res.text()), {
      callback: 'cb',
      value: { state: 'Forbidden', code: 'UE_FORBIDDEN' },
    })
  })

  test('an invalid callback is never written: the refusal is plain JSON', async () => {
    for (const callback of ['alert(document.cookie)//', '__proto__', '', null]) {
      const res = errorResponse(new UeError('UE_CALLBACK_INVALID'), { callback })
      assert.equal(res.status, 400)
      assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8')
      assert.equal((await res.json()).error.code, 'UE_CALLBACK_INVALID')
    }
  })

  test('the parts a node writer sends are those of the answer', async () => {
    const error = new UeError('UE_INTERNAL')
    const parts = errorParts(error, { headers: { Connection: 'close' } })
    const res = errorResponse(error, { headers: { Connection: 'close' } })
    assert.equal(parts.status, res.status)
    assert.deepEqual([...parts.headers], [...res.headers])
    assert.equal(parts.body, await res.text())
  })

  test("an error's own headers go with it in every shape, and the caller's come after them", async () => {
    const error = methodNotAllowed(['GET', 'HEAD'])
    for (const shape of ['api', 'editor', 'event'] as const) {
      const res = errorResponse(error, { shape, headers: { Connection: 'close' } })
      assert.equal(res.headers.get('allow'), 'GET, HEAD', shape)
      assert.equal(res.headers.get('connection'), 'close', shape)
      await res.arrayBuffer()
    }
    const jsonp = errorResponse(shuttingDown(), { shape: 'editor', callback: 'cb' })
    assert.equal(jsonp.headers.get('retry-after'), '5')
    const overridden = errorResponse(shuttingDown(), { headers: { 'Retry-After': '30' } })
    assert.equal(overridden.headers.get('retry-after'), '30')
  })

  test('the event shape is one server-sent error event with the code and the message in the locale', async () => {
    const res = errorResponse(new UeError('UE_AI_RATE_LIMITED'), {
      shape: 'event',
      locale: 'zh-CN',
      statusMode: 'protocol',
    })
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8')
    assert.equal(res.headers.get('cache-control'), 'no-store')
    const text = await res.text()
    assert.match(text, /^data: \{.*\}\n\n$/s)
    const event = JSON.parse(text.slice('data: '.length))
    const message = messageFor('zh-CN', 'UE_AI_RATE_LIMITED')
    assert.deepEqual(event, {
      type: 'error',
      data: message,
      code: 'UE_AI_RATE_LIMITED',
      error: { message, code: 'UE_AI_RATE_LIMITED' },
    })
    const http = errorResponse(new UeError('UE_AI_RATE_LIMITED'), { shape: 'event' })
    assert.equal(http.status, 429)
    await http.arrayBuffer()
  })
})
