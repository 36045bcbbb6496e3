import assert from 'node:assert/strict'
import {
  ALICE,
  AUDIENCE,
  bearer,
  hsToken,
  ISSUER,
  listFiles,
  SECRET,
  TOKENS,
} from '../helpers/auth.js'
import { GIF, png } from '../helpers/fixtures.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'
import {
  contentImport,
  type FlowOptions,
  type WordAnswer,
  wordImageDialog,
} from '../helpers/word-flows.js'

/** The host app's session, read from its cookie as docs/auth.md's recipe does. */
const hook = (request: Request) => {
  const m = /(?:^|;\s*)app_session=(\w+)/.exec(request.headers.get('cookie') ?? '')
  return m ? { user: m[1] as string } : null
}

/** Both stock flows once each with `o`: a pasted picture picked in the dialog, an imported one. */
async function bothFlows(srv: TestServer, o: FlowOptions): Promise<WordAnswer[]> {
  return [
    await wordImageDialog(
      srv,
      { name: 'clip_image002.png', bytes: png(6, 4), type: 'image/png' },
      o,
    ),
    await contentImport(srv, { bytes: GIF, contentType: 'image/gif' }, o),
  ]
}

function assertStored(answers: WordAnswer[]) {
  for (const a of answers) {
    assert.equal(a.state, 'SUCCESS', JSON.stringify(a))
    assert.match(a.url ?? '', /^\/uploads\/image\//)
  }
}

/** Refused as the editor shows it: HTTP 200, a readable state, UE_UNAUTHORIZED; nothing kept. */
async function assertRefused(srv: TestServer, answers: WordAnswer[]) {
  for (const a of answers) {
    assert.equal(a.status, 200)
    assert.equal(a.code, 'UE_UNAUTHORIZED', JSON.stringify(a))
    assert.equal(a.state, '未授权')
  }
  assert.deepEqual(await srv.storedFiles(), [])
}

describe('the stock Word flows of UEditor Plus under each recommended auth setup', () => {
  test('static tokens: with the token in serverUrl (auth.queryParam) both flows store their pictures for its user; without it both are refused and nothing is stored', async (t) => {
    const srv = await startTestServer(t, { auth: { tokens: TOKENS, queryParam: 'token' } })
    // serverHeaders holds the token too, but neither dialog sends it.
    await assertRefused(srv, await bothFlows(srv, {}))
    const stored = await bothFlows(srv, { serverQuery: `token=${ALICE}` })
    assertStored(stored)
    const alice = await listFiles(srv, bearer(ALICE))
    assert.equal(alice.status, 200)
    const images = await fetch(srv.action('listImage', '&start=0&size=20'), {
      headers: bearer(ALICE),
    })
    const listed = ((await images.json()) as { list: { url: string }[] }).list.map((e) => e.url)
    assert.deepEqual(listed.sort(), stored.map((a) => a.url).sort())
  })

  test('JWT: the header recipe alone leaves both flows refused; a short-lived token in serverUrl as well lets both store', async (t) => {
    const srv = await startTestServer(t, {
      auth: {
        jwt: { secret: SECRET, audience: AUDIENCE, issuer: ISSUER },
        header: 'X-Token',
        queryParam: 'token',
      },
    })
    const token = await hsToken({ sub: 'alice' })
    // What a page on the header recipe sends from these two dialogs: no X-Token.
    await assertRefused(srv, await bothFlows(srv, {}))
    assertStored(await bothFlows(srv, { serverQuery: `token=${encodeURIComponent(token)}` }))
    // An expired token in serverUrl is refused the same readable way.
    const expired = await hsToken({ sub: 'alice', exp: Math.floor(Date.now() / 1000) - 600 })
    const late = await contentImport(
      srv,
      { bytes: GIF, contentType: 'image/gif' },
      { serverQuery: `token=${expired}` },
    )
    assert.equal(late.code, 'UE_UNAUTHORIZED', JSON.stringify(late))
  })

  test('host hook: the same-origin session cookie lets both flows store; without it both are refused and nothing is stored', async (t) => {
    const srv = await startTestServer(t, {}, { authorize: hook })
    await assertRefused(srv, await bothFlows(srv, {}))
    assertStored(await bothFlows(srv, { cookie: 'app_session=alice' }))
    // The same cookie sent by another site's page is still refused (docs/auth.md).
    const other = await contentImport(
      srv,
      { bytes: GIF, contentType: 'image/gif' },
      { cookie: 'app_session=alice', origin: 'https://evil.example' },
    )
    assert.equal(other.code, 'UE_CROSS_SITE', JSON.stringify(other))
  })

  test('host hook across origins: a ticket in serverUrl that the hook checks lets both flows store from the listed editor page', async (t) => {
    const page = 'https://www.example.com'
    const tickets = new Map([['t0123456789abcdef', 'alice']])
    const srv = await startTestServer(
      t,
      { http: { corsOrigins: [page] } },
      {
        authorize: (request) => {
          const user = tickets.get(new URL(request.url).searchParams.get('ticket') ?? '')
          return user ? { user } : null
        },
      },
    )
    await assertRefused(srv, await bothFlows(srv, { origin: page }))
    assertStored(await bothFlows(srv, { origin: page, serverQuery: 'ticket=t0123456789abcdef' }))
  })

  test('a token in serverUrl that no setting reads is refused as missing, readably, with nothing stored', async (t) => {
    const srv = await startTestServer(t, { auth: { tokens: TOKENS }, locale: 'en' })
    const answers = await bothFlows(srv, { serverQuery: `token=${ALICE}` })
    for (const a of answers) {
      assert.equal(a.code, 'UE_UNAUTHORIZED', JSON.stringify(a))
      assert.equal(a.state, 'Unauthorized')
    }
    assert.deepEqual(await srv.storedFiles(), [])
  })
})
