import assert from 'node:assert/strict'
import { openMetadataStore } from '../../src/db/open.js'
import type { StorageKey } from '../../src/shared/types.js'
import {
  ALICE,
  AUDIENCE,
  BOB,
  bearer,
  deleteFile,
  hsToken,
  ISSUER,
  jsonpBody,
  listFiles,
  ROOT,
  recordingLogger,
  SECRET,
  startJwks,
  TOKENS,
  unsignedToken,
  uploadFile,
} from '../helpers/auth.js'
import { PDF, png } from '../helpers/fixtures.js'
import { multipartBody } from '../helpers/multipart.js'
import { type OriginImages, originImages, startOriginServer } from '../helpers/origin-server.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { before, describe, test } from '../helpers/test.js'

let images: OriginImages
before(async () => {
  images = await originImages()
})

const tokensConfig = {
  auth: { tokens: TOKENS, adminUsers: ['root'] },
  delete: { enabled: true },
  http: { errorStatus: 'http' as const },
}

/** One request per editor action, as UEditor Plus sends it, with the given headers. */
type Send = (headers: Record<string, string>) => Promise<Response>

function everyAction(srv: TestServer, origin: string) {
  const upload =
    (action: string, field: string): Send =>
    (headers) => {
      const { body, contentType } = multipartBody([
        { name: field, value: png(4, 4), filename: 'a.png', contentType: 'image/png' },
      ])
      return fetch(srv.action(action), {
        method: 'POST',
        headers: { ...headers, 'content-type': contentType },
        body,
      })
    }
  const form =
    (action: string, data: Record<string, string>): Send =>
    (h) =>
      fetch(srv.action(action, '&'), {
        method: 'POST',
        headers: h,
        body: new URLSearchParams(data),
      })
  return {
    config: ((h) => fetch(srv.action('config'), { headers: h })) as Send,
    image: upload('image', 'upfile'),
    snap: upload('image', 'upfile'),
    scrawl: form('scrawl', { upfile: png(4, 4).toString('base64') }),
    video: upload('video', 'file'),
    audio: upload('audio', 'file'),
    file: upload('file', 'file'),
    catch: form('catch', { 'source[]': origin }),
    listImage: (h: Record<string, string>) =>
      fetch(srv.action('listImage', '&start=0&size=20'), { headers: h }),
    listFile: (h: Record<string, string>) =>
      fetch(srv.action('listFile', '&start=0&size=20'), { headers: h }),
    deletefile: form('deletefile', { url: '/uploads/file/20260101/x.pdf' }),
  }
}

describe('authentication on the editor endpoint', () => {
  test('every action refuses a missing, garbage, expired, wrong-audience or alg:none token, and stores nothing', async (t) => {
    const origin = await startOriginServer(t, images)
    const srv = await startTestServer(t, {
      auth: {
        jwt: { secret: SECRET, audience: AUDIENCE, issuer: ISSUER },
        publicConfig: false,
        failuresPerMinute: 0,
      },
      delete: { enabled: true },
      http: { errorStatus: 'http' },
      catcher: { allowHosts: [origin.host] },
    })
    const now = Math.floor(Date.now() / 1000)
    const credentials: Record<string, Record<string, string>> = {
      none: {},
      garbage: bearer('garbage-garbage-garbage'),
      'not bearer': { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
      expired: bearer(await hsToken({ exp: now - 3600 })),
      'not yet valid': bearer(await hsToken({ nbf: now + 3600 })),
      'wrong audience': bearer(await hsToken({ aud: 'another-service' })),
      'wrong key': bearer(await hsToken({}, `${SECRET}-other`)),
      'alg none': bearer(unsignedToken()),
    }
    const actions = everyAction(srv, origin.url('/a.png'))
    for (const [action, send] of Object.entries(actions)) {
      for (const [label, headers] of Object.entries(credentials)) {
        const res = await send(headers)
        const body = (await res.json()) as { code: string; state: string }
        assert.equal(res.status, 401, `${action} with ${label}`)
        assert.equal(body.code, 'UE_UNAUTHORIZED', `${action} with ${label}`)
        assert.equal(body.state, '未授权')
      }
    }
    assert.deepEqual(await srv.storedFiles(), [])
    assert.deepEqual(origin.paths(), [])

    // The same requests with a valid token get through (so the refusals above were the token's).
    const good = bearer(await hsToken())
    assert.equal((await actions.config(good)).status, 200)
    assert.equal(((await (await actions.image(good)).json()) as { state: string }).state, 'SUCCESS')
  })

  test('a JWT whose sub breaks the user-id rule is refused as invalid, and the sub never reaches a log line', async (t) => {
    const log = recordingLogger()
    const srv = await startTestServer(
      t,
      { auth: { jwt: { secret: SECRET, audience: AUDIENCE }, failuresPerMinute: 0 } },
      { logger: log },
    )
    const subs = [
      ' alice',
      'alice ',
      'alice smith',
      'ali\u202Eecil.exe',
      'bob\u200B',
      'car\u00A0ol',
      'x'.repeat(129),
      'dave/../eve',
      'erin:admin',
    ]
    for (const sub of subs) {
      const res = await listFiles(srv, bearer(await hsToken({ sub })))
      assert.equal(res.body.code, 'UE_UNAUTHORIZED', JSON.stringify(sub))
    }
    const refusals = log.lines.filter((l) => l.includes('"audit":"auth"'))
    assert.equal(refusals.length, subs.length)
    assert.ok(refusals.every((l) => l.includes('"reason":"invalid"')))
    assert.ok(!log.lines.some((l) => /\\u202e|\u202E|ecil|smith/i.test(l)))
    // The rule is the one static tokens' users follow: such a sub passes.
    const ok = await listFiles(srv, bearer(await hsToken({ sub: 'Alice_01.b-c@example.com' })))
    assert.equal(ok.body.state, 'SUCCESS')
    // An identity provider's id such as Auth0's passes too.
    const auth0 = await listFiles(
      srv,
      bearer(await hsToken({ sub: 'auth0|5f7c8ec7c33c6c004bbafe82' })),
    )
    assert.equal(auth0.body.state, 'SUCCESS')
  })

  test('user B can neither list nor delete user A’s files; an admin sees and deletes every file', async (t) => {
    const srv = await startTestServer(t, tokensConfig)
    const stored = await uploadFile(srv, bearer(ALICE))
    assert.equal(stored.body.state, 'SUCCESS')
    const url = stored.body.url as string

    assert.deepEqual((await listFiles(srv, bearer(ALICE))).urls, [url])
    const bobsList = await listFiles(srv, bearer(BOB))
    assert.deepEqual(bobsList.urls, [])
    assert.equal(bobsList.body.total, 0)
    // No owner chosen by the client is honoured.
    const spoofed = await fetch(srv.action('listFile', '&start=0&size=20&owner=alice&user=alice'), {
      headers: { ...bearer(BOB), 'X-User': 'alice', 'X-Tenant': 'alice' },
    })
    assert.deepEqual(((await spoofed.json()) as { list: unknown[] }).list, [])

    const refused = await deleteFile(srv, bearer(BOB), url)
    assert.equal(refused.status, 403)
    assert.equal(refused.body.code, 'UE_FORBIDDEN')
    assert.equal((await fetch(`${srv.url}${url}`)).status, 200)

    assert.deepEqual((await listFiles(srv, bearer(ROOT))).urls, [url])
    assert.equal((await deleteFile(srv, bearer(ROOT), url)).body.state, 'SUCCESS')
    assert.equal((await fetch(`${srv.url}${url}`)).status, 404)
    assert.deepEqual((await listFiles(srv, bearer(ALICE))).urls, [])
    assert.deepEqual(await srv.storedFiles(), [])
  })

  test('the owner deletes a file by its URL, object and row, and deleting it again still succeeds', async (t) => {
    const srv = await startTestServer(t, tokensConfig)
    const url = (await uploadFile(srv, bearer(ALICE))).body.url as string
    const absolute = `${srv.url}${url}`

    assert.deepEqual(await deleteFile(srv, bearer(ALICE), absolute), {
      status: 200,
      body: { state: 'SUCCESS' },
    })
    assert.equal((await fetch(absolute)).status, 404)
    assert.deepEqual(await srv.storedFiles(), [])
    assert.deepEqual((await listFiles(srv, bearer(ALICE))).urls, [])
    assert.deepEqual(await deleteFile(srv, bearer(ALICE), url), {
      status: 200,
      body: { state: 'SUCCESS' },
    })
    for (const bad of [
      '/etc/passwd',
      '/uploads/../ueditor.db',
      'https://evil.example/uploads/a.pdf',
    ])
      assert.equal((await deleteFile(srv, bearer(ALICE), bad)).body.code, 'UE_VALIDATION_FAILED')
  })

  test('the delete action does not exist unless enabled', async (t) => {
    const srv = await startTestServer(t, { ...tokensConfig, delete: { enabled: false } })
    const url = (await uploadFile(srv, bearer(ALICE))).body.url as string
    assert.equal((await deleteFile(srv, bearer(ALICE), url)).body.code, 'UE_ACTION_UNKNOWN')
    assert.equal((await fetch(`${srv.url}${url}`)).status, 200)
  })

  test('rows stored before owners existed are listed only to admins', async (t) => {
    const srv = await startTestServer(t, tokensConfig)
    const config = srv.ue.config.index
    assert.equal(config.driver, 'sqlite')
    const store = await openMetadataStore(config)
    await store.files.add({
      key: 'file/20200101/legacy0123456789abcdefghij.pdf' as StorageKey,
      category: 'file',
      originalName: 'legacy.pdf',
      ext: '.pdf',
      size: PDF.length,
      mime: 'application/pdf',
      sha256: '0'.repeat(64),
    })
    await store.close()

    assert.deepEqual((await listFiles(srv, bearer(ALICE))).urls, [])
    assert.deepEqual((await listFiles(srv, bearer(ROOT))).urls, [
      '/uploads/file/20200101/legacy0123456789abcdefghij.pdf',
    ])
  })

  test('a shared library shows every user’s files, but still not rows without an owner', async (t) => {
    const srv = await startTestServer(t, {
      ...tokensConfig,
      auth: { ...tokensConfig.auth, sharedLibrary: true },
    })
    const url = (await uploadFile(srv, bearer(ALICE))).body.url as string
    assert.deepEqual((await listFiles(srv, bearer(BOB))).urls, [url])
    assert.equal((await deleteFile(srv, bearer(BOB), url)).body.code, 'UE_FORBIDDEN')
  })

  test('the quota counts each user’s stored bytes, refuses past it, and frees space on delete', async (t) => {
    const quota = PDF.length * 2 + 1
    const srv = await startTestServer(t, { ...tokensConfig, limits: { quotaBytes: quota } })
    const first = await uploadFile(srv, bearer(ALICE))
    assert.equal(first.body.state, 'SUCCESS')
    assert.equal((await uploadFile(srv, bearer(ALICE))).body.state, 'SUCCESS')
    const over = await uploadFile(srv, bearer(ALICE))
    assert.equal(over.status, 413)
    assert.equal(over.body.code, 'UE_QUOTA_EXCEEDED')
    assert.equal((await srv.storedFiles()).length, 2)
    // Another user has their own quota.
    assert.equal((await uploadFile(srv, bearer(BOB))).body.state, 'SUCCESS')

    await deleteFile(srv, bearer(ALICE), first.body.url as string)
    assert.equal((await uploadFile(srv, bearer(ALICE))).body.state, 'SUCCESS')
  })

  test('many uploads at once cannot push a user past the quota', async (t) => {
    const srv = await startTestServer(t, {
      ...tokensConfig,
      limits: { quotaBytes: PDF.length * 3 },
    })
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => uploadFile(srv, bearer(ALICE))),
    )
    const stored = answers.filter((a) => a.body.state === 'SUCCESS').length
    assert.ok(stored <= 3, `${stored} stored`)
    const listed = await listFiles(srv, bearer(ALICE))
    assert.equal(listed.urls.length, stored)
    assert.equal((await srv.storedFiles()).length, stored)
  })

  test('upload limits count per user, so one user’s burst does not stop another on the same address', async (t) => {
    const srv = await startTestServer(t, {
      ...tokensConfig,
      limits: { uploadsPerMinute: 2 },
    })
    assert.equal((await uploadFile(srv, bearer(ALICE))).body.state, 'SUCCESS')
    assert.equal((await uploadFile(srv, bearer(ALICE))).body.state, 'SUCCESS')
    assert.equal((await uploadFile(srv, bearer(ALICE))).body.code, 'UE_RATE_LIMITED')
    assert.equal((await uploadFile(srv, bearer(BOB))).body.state, 'SUCCESS')
  })

  test('a signed-in user keeps one upload allowance from every address, while anonymous visitors behind the same proxy are counted per address', async (t) => {
    const srv = await startTestServer(t, {
      ...tokensConfig,
      http: { trustProxy: ['loopback'] },
      limits: { uploadsPerMinute: 2 },
    })
    const from = (address: string) => ({ 'x-forwarded-for': address })
    assert.equal(
      (await uploadFile(srv, { ...bearer(ALICE), ...from('203.0.113.1') })).body.state,
      'SUCCESS',
    )
    assert.equal(
      (await uploadFile(srv, { ...bearer(ALICE), ...from('203.0.113.2') })).body.state,
      'SUCCESS',
    )
    assert.equal(
      (await uploadFile(srv, { ...bearer(ALICE), ...from('198.51.100.7') })).body.code,
      'UE_RATE_LIMITED',
      'a new address does not give the same user a new allowance',
    )
    assert.equal(
      (await uploadFile(srv, { ...bearer(BOB), ...from('203.0.113.1') })).body.state,
      'SUCCESS',
    )
  })

  test('a burst of bad tokens is throttled per address, while valid tokens from that address and config are still served', async (t) => {
    const log = recordingLogger()
    const srv = await startTestServer(
      t,
      { ...tokensConfig, auth: { ...tokensConfig.auth, failuresPerMinute: 5 } },
      { logger: log },
    )
    const codes: string[] = []
    for (let i = 0; i < 20; i++) {
      const res = await listFiles(srv, bearer(`wrong-token-${i}-0123456789abcdef`))
      codes.push(res.body.code as string)
    }
    assert.deepEqual(codes.slice(0, 5), Array(5).fill('UE_UNAUTHORIZED'))
    assert.deepEqual(codes.slice(5), Array(15).fill('UE_AUTH_THROTTLED'))
    // Same address, used-up bucket: a valid credential is checked and served all the same.
    for (const token of [ALICE, BOB, ALICE]) {
      const served = await listFiles(srv, bearer(token))
      assert.equal(served.status, 200)
      assert.equal(served.body.state, 'SUCCESS')
    }
    assert.equal((await uploadFile(srv, bearer(ALICE))).body.state, 'SUCCESS')
    const failing = await listFiles(srv, bearer('wrong-token-again-0123456789abcdef'))
    assert.equal(failing.status, 429)
    assert.equal(failing.body.code, 'UE_AUTH_THROTTLED')

    const config = await fetch(srv.action('config'))
    assert.equal(config.status, 200)
    assert.equal(((await config.json()) as { imageActionName: string }).imageActionName, 'image')

    const refusals = log.lines.filter((l) => l.includes('"audit":"auth"'))
    assert.equal(refusals.length, 21)
    assert.ok(refusals.every((l) => l.includes('"address":"127.0.0.1"')))
    assert.ok(!log.lines.some((l) => l.includes('wrong-token') || l.includes(ALICE)))
  })

  test('a bad token that keeps failing from one address is refused unchecked after three tries, while other tokens are still checked', async (t) => {
    const srv = await startTestServer(t, {
      ...tokensConfig,
      auth: { ...tokensConfig.auth, failuresPerMinute: 1000 },
    })
    const stale = bearer('stale-token-0123456789abcdef')
    const codes: string[] = []
    for (let i = 0; i < 6; i++) codes.push((await listFiles(srv, stale)).body.code as string)
    assert.deepEqual(codes, [
      ...Array(3).fill('UE_UNAUTHORIZED'),
      ...Array(3).fill('UE_AUTH_THROTTLED'),
    ])
    const other = await listFiles(srv, bearer('another-bad-token-0123456789'))
    assert.equal(other.body.code, 'UE_UNAUTHORIZED')
    assert.equal((await listFiles(srv, bearer(ALICE))).body.state, 'SUCCESS')
  })

  test('a token never appears in logs or answers, and uploads, deletes and refusals are audited', async (t) => {
    const log = recordingLogger()
    const srv = await startTestServer(
      t,
      { ...tokensConfig, auth: { ...tokensConfig.auth, queryParam: 'token' } },
      { logger: log },
    )
    const url = (await uploadFile(srv, {}, { query: `&token=${ALICE}` })).body.url as string
    await deleteFile(srv, bearer(ALICE), url)
    const refused = await uploadFile(srv, {}, { query: '&token=not-a-valid-token-at-all' })
    assert.ok(!JSON.stringify(refused.body).includes('not-a-valid'))

    const audit = (kind: string) => log.lines.filter((l) => l.includes(`"audit":"${kind}"`))
    assert.equal(audit('upload').length, 1)
    assert.match(audit('upload')[0] as string, /"user":"alice"/)
    assert.equal(audit('delete').length, 1)
    assert.match(audit('delete')[0] as string, /"verdict":"deleted"/)
    assert.equal(audit('auth').length, 1)
    for (const secret of [ALICE, 'not-a-valid-token-at-all'])
      assert.ok(!log.lines.some((l) => l.includes(secret)), secret)
  })
})

describe('a token in the query string (the channel JSONP and the Word import can use)', () => {
  const config = {
    ...tokensConfig,
    auth: { ...tokensConfig.auth, queryParam: 'token', publicConfig: false },
    http: { corsOrigins: ['https://www.example.com'] },
  }

  test('works for a JSONP config, a JSONP listing and an upfile upload', async (t) => {
    const srv = await startTestServer(t, config)
    const cfg = await fetch(srv.action('config', `&token=${ALICE}&callback=bd__editor__c1`))
    assert.equal(cfg.headers.get('content-type'), 'application/javascript; charset=utf-8')
    assert.equal(jsonpBody(await cfg.text(), 'bd__editor__c1').imageActionName, 'image')

    const { body, contentType } = multipartBody([
      { name: 'upfile', value: png(8, 8), filename: 'word.png', contentType: 'image/png' },
    ])
    const upload = await fetch(srv.action('image', `&token=${ALICE}`), {
      method: 'POST',
      headers: { 'content-type': contentType },
      body,
    })
    const stored = (await upload.json()) as { state: string; url: string }
    assert.equal(stored.state, 'SUCCESS')

    const list = await fetch(
      srv.action('listImage', `&start=0&size=20&token=${ALICE}&callback=bd__editor__l1`),
    )
    const listed = jsonpBody(await list.text(), 'bd__editor__l1') as { list: { url: string }[] }
    assert.deepEqual(
      listed.list.map((e) => e.url),
      [stored.url],
    )
    const bobs = await fetch(
      srv.action('listImage', `&start=0&size=20&token=${BOB}&callback=bd__editor__l2`),
    )
    assert.deepEqual((jsonpBody(await bobs.text(), 'bd__editor__l2') as { list: [] }).list, [])

    const anonymous = await fetch(srv.action('config', '&callback=bd__editor__c2'))
    assert.equal(jsonpBody(await anonymous.text(), 'bd__editor__c2').code, 'UE_UNAUTHORIZED')
  })

  test('a JSONP catch with a valid token captures without the jsonpActions opt-in; without one it fetches nothing', async (t) => {
    const origin = await startOriginServer(t, images)
    const srv = await startTestServer(t, {
      ...config,
      editor: { catcherLocalDomain: ['img.local.example'] },
      catcher: { allowHosts: [origin.host] },
    })
    const source = encodeURIComponent(origin.url('/a.png'))

    const refused = await fetch(srv.action('catch', `&source%5B%5D=${source}&callback=cb1`))
    const refusal = jsonpBody(await refused.text(), 'cb1') as { list: { code: string }[] }
    assert.equal(refusal.list[0]?.code, 'UE_UNAUTHORIZED')
    const wrong = await fetch(
      srv.action('catch', `&source%5B%5D=${source}&token=wrong-0123456789abcdef&callback=cb2`),
    )
    assert.equal(
      (jsonpBody(await wrong.text(), 'cb2') as { list: { code: string }[] }).list[0]?.code,
      'UE_UNAUTHORIZED',
    )
    assert.deepEqual(origin.paths(), [])

    const res = await fetch(
      srv.action('catch', `&source%5B%5D=${source}&token=${ALICE}&callback=bd__editor__k1`),
    )
    const answer = jsonpBody(await res.text(), 'bd__editor__k1') as {
      list: { state: string; url: string }[]
    }
    assert.equal(answer.list[0]?.state, 'SUCCESS')
    assert.deepEqual(origin.paths(), ['/a.png'])
    assert.deepEqual((await listFiles(srv, bearer(ALICE))).urls, [])
    const imageList = await fetch(srv.action('listImage', '&start=0&size=5'), {
      headers: bearer(ALICE),
    })
    assert.deepEqual(
      ((await imageList.json()) as { list: { url: string }[] }).list.map((e) => e.url),
      [answer.list[0]?.url],
    )
  })

  test('is not read unless a query parameter is configured', async (t) => {
    const srv = await startTestServer(t, tokensConfig)
    const res = await fetch(srv.action('listFile', `&token=${ALICE}`))
    assert.equal(((await res.json()) as { code: string }).code, 'UE_UNAUTHORIZED')
  })
})

describe('a custom header name', () => {
  test('passes the CORS preflight and carries the token', async (t) => {
    const srv = await startTestServer(t, {
      ...tokensConfig,
      auth: { ...tokensConfig.auth, header: 'X-Token' },
      http: { corsOrigins: ['https://www.example.com'] },
    })
    const preflight = await fetch(srv.action('file'), {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://www.example.com',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'x-token',
      },
    })
    assert.equal(preflight.status, 204)
    const allowed = (preflight.headers.get('access-control-allow-headers') ?? '')
      .toLowerCase()
      .split(/\s*,\s*/)
    assert.ok(allowed.includes('x-token'), allowed.join())
    assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://www.example.com')

    const stored = await uploadFile(srv, { 'X-Token': ALICE, Origin: 'https://www.example.com' })
    assert.equal(stored.body.state, 'SUCCESS')
    assert.equal((await uploadFile(srv, { 'X-Token': `Bearer ${BOB}` })).body.state, 'SUCCESS')
    assert.equal((await uploadFile(srv, { 'X-Token': 'nope' })).body.code, 'UE_UNAUTHORIZED')
  })

  test('a signed-out page’s blank credential is a missing one, never counted as a failure', async (t) => {
    const srv = await startTestServer(t, {
      ...tokensConfig,
      auth: { ...tokensConfig.auth, header: 'X-Token', queryParam: 'token', failuresPerMinute: 3 },
    })
    const blanks: Record<string, string>[] = [
      { 'X-Token': '' },
      { 'X-Token': '   ' },
      { 'X-Token': 'Bearer ' },
      { 'X-Token': 'null' },
      { 'X-Token': 'undefined' },
      { Authorization: 'Bearer ' },
      { Authorization: 'Bearer undefined' },
    ]
    for (let round = 0; round < 3; round++)
      for (const headers of blanks) {
        const answer = await uploadFile(srv, headers, { query: round === 2 ? '&token=' : '' })
        assert.equal(
          answer.status,
          401,
          `${JSON.stringify(headers)} ${JSON.stringify(answer.body)}`,
        )
        assert.equal(answer.body.code, 'UE_UNAUTHORIZED', JSON.stringify(headers))
      }
    // The blank header does not hide a token the same request carries in the query.
    assert.equal(
      (await uploadFile(srv, { 'X-Token': '' }, { query: `&token=${ALICE}` })).body.state,
      'SUCCESS',
    )
  })

  test('carries the token next to Authorization: Basic, which is neither read nor counted', async (t) => {
    const srv = await startTestServer(t, {
      ...tokensConfig,
      auth: { ...tokensConfig.auth, header: 'X-Token', failuresPerMinute: 3 },
    })
    const basic = {
      Authorization: `Basic ${Buffer.from('editor:site-password').toString('base64')}`,
    }
    for (let i = 0; i < 10; i++) {
      const alone = await listFiles(srv, basic)
      assert.equal(alone.status, 401)
      assert.equal(alone.body.code, 'UE_UNAUTHORIZED')
    }
    assert.equal((await uploadFile(srv, { ...basic, 'X-Token': ALICE })).body.state, 'SUCCESS')
  })
})

describe('the authorize hook (the host app’s own session cookie)', () => {
  const hook = (request: Request) => {
    const cookie = request.headers.get('cookie') ?? ''
    const m = /(?:^|;\s*)session=(\w+)/.exec(cookie)
    return m ? { user: m[1] as string, admin: m[1] === 'boss' } : null
  }

  test('authorises uploads and listings by cookie, but no JSONP listing or JSONP catch', async (t) => {
    const origin = await startOriginServer(t, images)
    const srv = await startTestServer(
      t,
      { http: { errorStatus: 'http' }, catcher: { allowHosts: [origin.host] } },
      { authorize: hook },
    )
    const cookie = { Cookie: 'session=alice' }
    assert.equal(srv.ue.auth.mode, 'hook')
    const url = (await uploadFile(srv, cookie)).body.url as string
    assert.deepEqual((await listFiles(srv, cookie)).urls, [url])
    assert.deepEqual((await listFiles(srv, { Cookie: 'session=bob' })).urls, [])
    assert.equal((await listFiles(srv, {})).status, 401)

    const jsonpList = await fetch(srv.action('listFile', '&start=0&size=9&callback=steal'), {
      headers: cookie,
    })
    assert.equal(jsonpBody(await jsonpList.text(), 'steal').code, 'UE_FORBIDDEN')
    const source = encodeURIComponent(origin.url('/a.png'))
    const jsonpCatch = await fetch(srv.action('catch', `&source%5B%5D=${source}&callback=cb`), {
      headers: cookie,
    })
    const entry = (jsonpBody(await jsonpCatch.text(), 'cb') as { list: { code: string }[] }).list[0]
    assert.equal(entry?.code, 'UE_REMOTE_JSONP_DISABLED')
    assert.deepEqual(origin.paths(), [])
  })

  test('a session cookie next to Authorization: Basic (a site behind HTTP Basic) is the hook’s to judge, and never counted as a failure', async (t) => {
    const srv = await startTestServer(
      t,
      { http: { errorStatus: 'http' }, auth: { failuresPerMinute: 5 } },
      { authorize: hook },
    )
    const basic = {
      Authorization: `Basic ${Buffer.from('editor:site-password').toString('base64')}`,
    }
    for (let i = 0; i < 40; i++) {
      const res = await listFiles(srv, { ...basic, Cookie: 'session=alice' })
      assert.equal(res.body.state, 'SUCCESS', `request ${i}`)
    }
    const url = (await uploadFile(srv, { ...basic, Cookie: 'session=alice' })).body.url as string
    assert.ok(url)
    // Without a session the hook says nobody: refused as missing, however often.
    for (let i = 0; i < 40; i++) {
      const res = await listFiles(srv, basic)
      assert.equal(res.status, 401)
      assert.equal(res.body.code, 'UE_UNAUTHORIZED')
    }
    // A Bearer value the hook mode has no use for, even a malformed one, is not counted either.
    for (let i = 0; i < 10; i++) {
      const res = await listFiles(srv, {
        Authorization: 'Bearer not ours!',
        Cookie: 'session=alice',
      })
      assert.deepEqual(res.urls, [url])
    }
    assert.deepEqual((await listFiles(srv, { ...basic, Cookie: 'session=alice' })).urls, [url])
  })

  test('allows JSONP listings with a cookie only when hookJsonp is set', async (t) => {
    const srv = await startTestServer(t, { auth: { hookJsonp: true } }, { authorize: hook })
    const res = await fetch(srv.action('listFile', '&start=0&size=9&callback=cb'), {
      headers: { Cookie: 'session=alice' },
    })
    assert.equal(jsonpBody(await res.text(), 'cb').state, 'SUCCESS')
  })

  test('a hook that throws refuses the request', async (t) => {
    const srv = await startTestServer(
      t,
      {},
      {
        authorize: () => {
          throw new Error('session store down')
        },
      },
    )
    assert.equal((await listFiles(srv, { Cookie: 'session=alice' })).body.code, 'UE_UNAUTHORIZED')
  })
})

describe('JWTs against a JWKS served on loopback', () => {
  test('accept an RS256 token from the key set, refuse a forged or confused one, and grant admin by claim', async (t) => {
    const jwks = await startJwks(t)
    const srv = await startTestServer(t, {
      auth: { jwt: { jwksUrl: jwks.url, audience: AUDIENCE }, failuresPerMinute: 0 },
      delete: { enabled: true },
    })
    assert.equal(srv.ue.auth.mode, 'jwt')
    const alice = await jwks.sign({ sub: 'alice' })
    const url = (await uploadFile(srv, bearer(alice))).body.url as string
    assert.ok(url)
    assert.ok(jwks.requests() >= 1)

    // HS256 signed with the public key (algorithm confusion), and an HS256 token at all.
    const confused = await hsToken({}, jwks.publicPem)
    assert.equal((await listFiles(srv, bearer(confused))).body.code, 'UE_UNAUTHORIZED')
    assert.equal((await listFiles(srv, bearer(unsignedToken()))).body.code, 'UE_UNAUTHORIZED')
    const [head, , sig] = alice.split('.')
    const claims = Buffer.from(
      JSON.stringify({ sub: 'boss', aud: AUDIENCE, exp: 4_000_000_000, ueditor_admin: true }),
    ).toString('base64url')
    assert.equal(
      (await listFiles(srv, bearer(`${head}.${claims}.${sig}`))).body.code,
      'UE_UNAUTHORIZED',
    )

    const bob = await jwks.sign({ sub: 'bob' })
    assert.deepEqual((await listFiles(srv, bearer(bob))).urls, [])
    const admin = await jwks.sign({ sub: 'ops', admin: true })
    assert.deepEqual((await listFiles(srv, bearer(admin))).urls, [url])
  })
})

describe('the materials API on the same auth layer', () => {
  test('a user credential reads, admin scope writes, and the materials tokens still work', async (t) => {
    const legacy = 'legacy-admin-0123456789abcdef'
    const srv = await startTestServer(t, {
      ...tokensConfig,
      materials: { adminTokens: [legacy] },
    })
    const categories = `${srv.url}/materials/categories`
    assert.equal((await fetch(categories)).status, 401)
    assert.equal((await fetch(categories, { headers: bearer(ALICE) })).status, 200)
    const create = (token: string) =>
      fetch(`${srv.url}/materials/admin/categories`, {
        method: 'POST',
        headers: { ...bearer(token), 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'news' }),
      })
    assert.equal((await create(ALICE)).status, 403)
    assert.equal((await create(ROOT)).status, 201)
    assert.equal((await create(legacy)).status, 201)
    assert.equal((await fetch(categories, { headers: bearer(legacy) })).status, 200)
  })
})
