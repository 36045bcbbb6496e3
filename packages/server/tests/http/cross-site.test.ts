import assert from 'node:assert/strict'
import { startAiUpstream } from '../helpers/ai-upstream.js'
import { ALICE, bearer, listFiles, TOKENS, uploadFile } from '../helpers/auth.js'
import { MP3, MP4, PDF, png } from '../helpers/fixtures.js'
import { multipartBody } from '../helpers/multipart.js'
import { type OriginImages, originImages, startOriginServer } from '../helpers/origin-server.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { before, describe, test } from '../helpers/test.js'

const EDITOR_PAGE = 'https://www.example.com'
const EVIL = 'https://evil.example'

/** The host app's session cookie: `session=<user>`, `boss` is an admin. */
const hook = (request: Request) => {
  const m = /(?:^|;\s*)session=(\w+)/.exec(request.headers.get('cookie') ?? '')
  return m ? { user: m[1] as string, admin: m[1] === 'boss' } : null
}

let images: OriginImages
before(async () => {
  images = await originImages()
})

type Headers = Record<string, string>

/** Each state-changing editor action, sent as a browser would with `headers` (cookie included). */
function changes(srv: TestServer, source: string, fileUrl: () => string) {
  const upload =
    (action: string, field: string, value: Buffer, filename: string) => (headers: Headers) => {
      const { body, contentType } = multipartBody([
        { name: field, value, filename, contentType: 'application/octet-stream' },
      ])
      return fetch(srv.action(action), {
        method: 'POST',
        headers: { ...headers, 'content-type': contentType },
        body,
      })
    }
  const form = (action: string, data: () => Record<string, string>) => (headers: Headers) =>
    fetch(srv.action(action), { method: 'POST', headers, body: new URLSearchParams(data()) })
  return {
    image: upload('image', 'upfile', png(4, 4), 'a.png'),
    video: upload('video', 'file', MP4, 'a.mp4'),
    audio: upload('audio', 'file', MP3, 'a.mp3'),
    file: upload('file', 'file', PDF, 'a.pdf'),
    scrawl: form('scrawl', () => ({ upfile: png(4, 4).toString('base64') })),
    catch: form('catch', () => ({ 'source[]': source })),
    deletefile: form('deletefile', () => ({ url: fileUrl() })),
    ai: (headers: Headers) =>
      fetch(srv.action('ai'), {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'hello' }),
      }),
  }
}

/** The code of an editor answer, or of the AI action's SSE `error` event. */
async function codeOf(res: Response): Promise<string | undefined> {
  const text = await res.text()
  if (text.startsWith('{')) return (JSON.parse(text) as { code?: string }).code
  const data = text
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => JSON.parse(l.slice(5)) as { type?: string; code?: string })
  return data.find((d) => d.type === 'error')?.code
}

async function cookieServer(t: Parameters<typeof startTestServer>[0]) {
  const origin = await startOriginServer(t, images)
  const upstream = await startAiUpstream(t)
  const srv = await startTestServer(
    t,
    {
      delete: { enabled: true },
      http: { corsOrigins: [EDITOR_PAGE], errorStatus: 'http' },
      catcher: { allowHosts: [origin.host] },
      ai: { baseUrl: upstream.baseUrl, apiKey: 'sk-test-0123456789abcdef', model: 'test-model' },
    },
    { authorize: hook },
  )
  return { srv, origin, upstream }
}

describe('cross-site requests riding the session cookie (the authorize hook)', () => {
  test('every state-changing action refuses a cross-site browser request with UE_CROSS_SITE, and nothing changes', async (t) => {
    const { srv, origin, upstream } = await cookieServer(t)
    const cookie = { Cookie: 'session=alice' }
    const kept = (await uploadFile(srv, cookie)).body.url as string
    const actions = changes(srv, origin.url('/a.png'), () => kept)
    const crossSite: Record<string, Headers> = {
      'another site’s Origin': { Origin: EVIL },
      'Sec-Fetch-Site: cross-site': { 'Sec-Fetch-Site': 'cross-site' },
      both: { Origin: EVIL, 'Sec-Fetch-Site': 'cross-site' },
      'a sibling site not configured for CORS': {
        Origin: 'https://blog.example.com',
        'Sec-Fetch-Site': 'same-site',
      },
      'an opaque origin (sandboxed frame, data: URL)': { Origin: 'null' },
      'a look-alike of the allowed origin': { Origin: `${EDITOR_PAGE}.evil.example` },
    }
    for (const [action, send] of Object.entries(actions))
      for (const [label, headers] of Object.entries(crossSite)) {
        const res = await send({ ...cookie, ...headers })
        assert.equal(res.status, 403, `${action} with ${label}`)
        assert.equal(await codeOf(res), 'UE_CROSS_SITE', `${action} with ${label}`)
      }
    const refused = await actions.deletefile({ ...cookie, Origin: EVIL })
    assert.deepEqual(await refused.json(), {
      state: '不接受来自其他网站的请求',
      code: 'UE_CROSS_SITE',
    })
    assert.deepEqual((await listFiles(srv, cookie)).urls, [kept])
    assert.deepEqual(origin.paths(), [])
    assert.equal(upstream.requests.length, 0)
  })

  test('same-origin, the allowed CORS origin and non-browser clients are served', async (t) => {
    const { srv, origin } = await cookieServer(t)
    const cookie = { Cookie: 'session=alice' }
    const own = new URL(srv.url).origin
    let target = ''
    const actions = changes(srv, origin.url('/a.png'), () => target)
    const allowed: Record<string, Headers> = {
      'no Origin and no Sec-Fetch-Site (curl, a server)': {},
      'the server’s own Origin (a browser without Sec-Fetch-Site)': { Origin: own },
      'Sec-Fetch-Site: same-origin': { Origin: own, 'Sec-Fetch-Site': 'same-origin' },
      // UEditor on another site that the server lists in http.corsOrigins: XHR with FormData.
      'the allowed CORS origin, cross-site': {
        Origin: EDITOR_PAGE,
        'Sec-Fetch-Site': 'cross-site',
      },
      'the allowed CORS origin, same-site': { Origin: EDITOR_PAGE, 'Sec-Fetch-Site': 'same-site' },
      'Sec-Fetch-Site: none (typed by the user)': { 'Sec-Fetch-Site': 'none' },
    }
    for (const [label, headers] of Object.entries(allowed)) {
      for (const action of ['image', 'video', 'audio', 'file', 'scrawl', 'catch'] as const) {
        const res = await actions[action]({ ...cookie, ...headers })
        const body = (await res.json()) as { state?: string; list?: { state: string }[] }
        const state = action === 'catch' ? body.list?.[0]?.state : body.state
        assert.equal(state, 'SUCCESS', `${action} with ${label}`)
      }
      target = (await uploadFile(srv, cookie)).body.url as string
      const deleted = (await (await actions.deletefile({ ...cookie, ...headers })).json()) as {
        state: string
      }
      assert.equal(deleted.state, 'SUCCESS', `deletefile with ${label}`)
      assert.ok(!(await listFiles(srv, cookie)).urls.includes(target), label)
      const ai = await actions.ai({ ...cookie, ...headers })
      assert.equal(ai.status, 200, `ai with ${label}`)
      assert.equal(await codeOf(ai), undefined, `ai with ${label}`)
    }
  })

  test('reads and JSONP are not affected: listings and config answer a cross-site request', async (t) => {
    const { srv } = await cookieServer(t)
    const cookie = { Cookie: 'session=alice' }
    const cross = { Origin: EVIL, 'Sec-Fetch-Site': 'cross-site' }
    assert.equal((await listFiles(srv, { ...cookie, ...cross })).body.state, 'SUCCESS')
    const config = await fetch(srv.action('config', '&callback=cb'), { headers: cross })
    assert.match(await config.text(), /^\/\*\*\/cb\(/)
  })

  test('a credential the page itself sends (a Bearer token) is not held to it: no cookie is involved', async (t) => {
    const srv = await startTestServer(t, {
      auth: { tokens: TOKENS },
      delete: { enabled: true },
      http: { corsOrigins: [EDITOR_PAGE] },
    })
    const stored = await uploadFile(srv, {
      ...bearer(ALICE),
      Origin: EVIL,
      'Sec-Fetch-Site': 'cross-site',
    })
    assert.equal(stored.body.state, 'SUCCESS')
  })

  test('materials admin writes by cookie refuse a cross-site request; reads and same-origin writes pass', async (t) => {
    const srv = await startTestServer(t, { materials: { seed: false } }, { authorize: hook })
    const boss = { Cookie: 'session=boss', 'content-type': 'application/json' }
    const create = (headers: Headers) =>
      fetch(`${srv.url}/materials/admin/categories`, {
        method: 'POST',
        headers: { ...boss, ...headers },
        body: JSON.stringify({ name: 'news' }),
      })
    const refused = await create({ Origin: EVIL, 'Sec-Fetch-Site': 'cross-site' })
    assert.equal(refused.status, 403)
    assert.equal(
      ((await refused.json()) as { error: { code: string } }).error.code,
      'UE_CROSS_SITE',
    )
    const own = new URL(srv.url).origin
    const made = await create({ Origin: own, 'Sec-Fetch-Site': 'same-origin' })
    assert.equal(made.status, 201)
    const { id } = (await made.json()) as { id: number }
    const remove = await fetch(`${srv.url}/materials/admin/categories/${id}`, {
      method: 'DELETE',
      headers: { ...boss, Origin: EVIL },
    })
    assert.equal(remove.status, 403)
    const read = await fetch(`${srv.url}/materials/categories`, {
      headers: { ...boss, Origin: EVIL, 'Sec-Fetch-Site': 'cross-site' },
    })
    assert.equal(read.status, 200)
    const names = JSON.stringify(await read.json())
    assert.match(names, /news/)
  })
})
