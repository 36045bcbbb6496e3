import assert from 'node:assert/strict'
import { png } from '../helpers/fixtures.js'
import {
  assertNoLeak,
  assertStillServes,
  assertUnchanged,
  expectRefused,
  postBody,
  snapshot,
} from '../helpers/hostile.js'
import { multipartBody } from '../helpers/multipart.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'

const PHP = Buffer.from('<?php system($_GET["c"]); ?>')

function assertNotPolluted() {
  const probe = {} as Record<string, unknown>
  assert.equal(probe.polluted, undefined)
  assert.equal(probe.admin, undefined)
  assert.equal(Object.hasOwn(Object.prototype, 'polluted'), false)
}

async function config(srv: TestServer, query = '') {
  return (await fetch(srv.action('config', query))).json()
}

describe('S2: config cannot be overridden by request parameters', () => {
  const MASS = [
    'CONFIG[imageAllowFiles][]=.php',
    'CONFIG[imagePathFormat]=../../x',
    'imageAllowFiles[]=.html',
    'imageAllowFiles=.php',
    'imageMaxSize=999999999',
    'imagePathFormat=../../{filename}',
    'security[allowActiveContent]=true',
  ].join('&')

  test('query and form parameters named like config keys are ignored by uploads', async (t) => {
    const srv = await startTestServer(t)
    const before = await config(srv)
    const fields = MASS.split('&').map((kv) => {
      const [name, value] = kv.split('=') as [string, string]
      return { name, value }
    })
    const shell = multipartBody([...fields, { name: 'upfile', filename: 'a.php', value: PHP }])
    await expectRefused(
      srv,
      () => postBody(srv, 'image', shell.body, shell.contentType, {}, `&${MASS}`),
      {
        codes: ['UE_TYPE_NOT_ALLOWED'],
      },
    )
    const image = multipartBody([...fields, { name: 'upfile', filename: 'a.png', value: png() }])
    const up = await (
      await postBody(srv, 'image', image.body, image.contentType, {}, `&${MASS}`)
    ).json()
    assert.equal(up.state, 'SUCCESS')
    assert.match(up.url, /^\/uploads\/image\/\d{8}\/[0-9a-z]+\.png$/)
    assert.deepEqual(await config(srv), before)
  })

  test('config answers the same object whatever parameters it is sent', async (t) => {
    const srv = await startTestServer(t)
    const plain = await config(srv)
    for (const query of [
      '&imageUrlPrefix=javascript:alert(1)',
      `&${MASS}`,
      '&editor[imageUrlPrefix]=x',
      '&__proto__[imageUrlPrefix]=x',
    ])
      assert.deepEqual(await config(srv, query), plain, query)
    assertNotPolluted()
  })
})

describe('S29: JSONP callback injection', () => {
  test('callbacks that could inject code are refused as JSON that does not echo them', async (t) => {
    const srv = await startTestServer(t)
    for (const cb of [
      'alert(document.domain)//',
      '</script><svg onload=alert(1)>',
      'a.b[c]',
      'a;alert(1)',
      'x'.repeat(10_000),
      `CWS${'A'.repeat(1_000)}`,
      '__proto__',
      'constructor',
      '1abc',
      'a\u2028b',
    ]) {
      for (const action of ['config', 'listImage']) {
        const refusal = await expectRefused(
          srv,
          () => fetch(srv.action(action, `&callback=${encodeURIComponent(cb)}`)),
          { codes: ['UE_CALLBACK_INVALID'], label: `${action} ${cb.slice(0, 20)}` },
        )
        assert.notEqual(refusal, 'closed')
        if (refusal === 'closed') continue
        assert.ok(!refusal.text.includes(cb.slice(0, 8)))
      }
    }
  })

  test('an accepted callback gets a /**/-prefixed script with nosniff', async (t) => {
    const srv = await startTestServer(t)
    const cb = `CWS${'a'.repeat(60)}`
    const res = await fetch(srv.action('config', `&callback=${cb}`))
    assert.equal(res.headers.get('content-type'), 'application/javascript; charset=utf-8')
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff')
    assert.ok((await res.text()).startsWith(`/**/${cb}(`))
  })
})

describe('S30: every answer is JSON, escaped, and never an HTML page', () => {
  test('a name with markup comes back escaped and refusals are JSON even when HTML is asked for', async (t) => {
    const srv = await startTestServer(t, { editor: { imageMaxSize: 1000 } })
    const { body, contentType } = multipartBody([
      { name: 'upfile', filename: '<img src=x onerror=alert(1)>\u2028.png', value: png() },
    ])
    const ok = await postBody(srv, 'image', body, contentType, { Accept: 'text/html' })
    const okText = await ok.text()
    assert.equal(ok.headers.get('content-type'), 'application/json; charset=utf-8')
    assert.doesNotMatch(okText, /[<>\u2028]/)
    assert.equal(JSON.parse(okText).state, 'SUCCESS')
    const big = multipartBody([
      { name: 'upfile', filename: 'a.png', value: png(40, 40, { noise: true }) },
    ])
    for (const send of [
      () => fetch(srv.action('nope'), { headers: { Accept: 'text/html' } }),
      () => fetch(`${srv.url}/ueditor?action=<script>`, { headers: { Accept: 'text/html' } }),
      () => postBody(srv, 'image', big.body, big.contentType, { Accept: 'text/html' }),
      () => fetch(`${srv.url}/nowhere<script>`, { headers: { Accept: 'text/html' } }),
    ]) {
      const refusal = await expectRefused(srv, send, { mayClose: true })
      if (refusal === 'closed') continue
      assert.match(refusal.text, /^\{/)
      assert.doesNotMatch(refusal.text, /<(script|html)/i)
    }
  })
})

describe('S32: dispatch confusion and prototype pollution', () => {
  test('odd action values are unknown actions, answered as JSON', async (t) => {
    const srv = await startTestServer(t)
    for (const query of [
      '?action=__proto__',
      '?action=constructor',
      '?action=toString',
      '?action=hasOwnProperty',
      '?action=valueOf',
      '?action[]=image',
      '?action=image&action=config',
      '?action=IMAGE',
      '?action=',
      '',
      '?Action=config',
    ]) {
      await expectRefused(srv, () => fetch(`${srv.url}/ueditor${query}`, { method: 'POST' }), {
        codes: ['UE_ACTION_UNKNOWN'],
        label: query,
      })
    }
    assertNotPolluted()
  })

  test('prototype keys in the query, url-encoded forms, multipart fields and JSON change nothing', async (t) => {
    const srv = await startTestServer(t)
    const keys = [
      '__proto__[polluted]=1',
      'constructor[prototype][polluted]=1',
      'source[__proto__][polluted]=1',
      '__proto__.polluted=1',
    ].join('&')
    // A listing is a read: it answers, and nothing may change.
    const before = await snapshot(srv)
    const list = await (await fetch(srv.action('listImage', `&${keys}&start[__proto__]=1`))).json()
    assert.deepEqual(list, { state: 'SUCCESS', list: [], start: 0, total: 0 })
    await assertUnchanged(srv, before)
    assertNotPolluted()
    await expectRefused(
      srv,
      () =>
        postBody(
          srv,
          'scrawl',
          `${keys}&upfile=${encodeURIComponent(Buffer.from('not a png').toString('base64'))}`,
          'application/x-www-form-urlencoded',
          {},
          `&${keys}`,
        ),
      { codes: ['UE_CONTENT_MISMATCH', 'UE_TYPE_NOT_ALLOWED'] },
    )
    assertNotPolluted()
    const form = multipartBody([
      { name: '__proto__[polluted]', value: '1' },
      { name: 'constructor[prototype][polluted]', value: '1' },
      { name: '__proto__', value: '{"polluted":1}' },
      { name: 'upfile', filename: '__proto__.php', value: PHP },
    ])
    await expectRefused(srv, () => postBody(srv, 'image', form.body, form.contentType), {
      codes: ['UE_TYPE_NOT_ALLOWED'],
    })
    assertNotPolluted()
    for (const action of ['image', 'scrawl', 'file'])
      await expectRefused(
        srv,
        () =>
          postBody(srv, action, '{"__proto__":{"polluted":true,"admin":true}}', 'application/json'),
        { codes: ['UE_BODY_INVALID'], label: action },
      )
    assertNotPolluted()
  })

  test('a config object carrying prototype keys pollutes nothing', async (t) => {
    const hostile = JSON.parse(
      '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}},"editor":{"__proto__":{"admin":true}}}',
    )
    const srv = await startTestServer(t, hostile)
    assertNotPolluted()
    const body = await config(srv)
    assert.equal(body.admin, undefined)
    assertNoLeak(srv, JSON.stringify(body))
    await assertStillServes(srv)
  })
})
