import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { loadConfig } from '../../src/config/load.js'
import { publicEditorConfig } from '../../src/config/public.js'
import type { ServerConfigInput } from '../../src/config/schema.js'
import { withoutCapture } from '../../src/editor/actions/config.js'
import { startServer } from '../../src/standalone/serve.js'
import { png } from '../helpers/fixtures.js'
import { multipartBody } from '../helpers/multipart.js'
import { originImages, startOriginServer } from '../helpers/origin-server.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, type TestContext, test } from '../helpers/test.js'

/** The page the editor runs on in these tests, on another origin than the server. */
const PAGE_HOST = 'www.example.com'

/**
 * UEditor Plus's rule after a paste: an image whose URL starts with `http(s):` or `ftp:` is
 * sent to `catch` unless the URL contains the page's host or any `catcherLocalDomain` entry
 * (plain substring tests), or starts with "." or "/".
 */
function editorSendsToCatch(src: string, localDomains: readonly string[]): boolean {
  if (!/^(https?|ftp):/i.test(src)) return false
  if (src.includes(PAGE_HOST) || /^[./]/.test(src)) return false
  return !localDomains.some((d) => src.includes(d))
}

interface ConfigAnswer {
  catcherLocalDomain: string[]
  formulaConfig?: Record<string, unknown>
  [key: string]: unknown
}

/** The answer over JSONP (`query` is the rest of the editor's `serverUrl` query). */
async function jsonpConfigAnswer(url: string, query = ''): Promise<ConfigAnswer> {
  const text = await (
    await fetch(`${url}/ueditor?${query}action=config&callback=bd__editor__cfg`)
  ).text()
  const wrapped = /^\/\*\*\/bd__editor__cfg\((.*)\);$/s.exec(text)
  assert.ok(wrapped, text.slice(0, 80))
  return JSON.parse(wrapped[1] as string) as ConfigAnswer
}

/**
 * The answer over XHR, checked to be the object the JSONP answer wraps, where that one may
 * turn capture off (when a JSONP catch would be refused).
 */
async function configAnswer(url: string): Promise<ConfigAnswer> {
  const plain = (await (await fetch(`${url}/ueditor?action=config&&noCache=1`)).json()) as object
  const wrapped = await jsonpConfigAnswer(url)
  assert.ok(
    isDeepStrictEqual(wrapped, plain) || isDeepStrictEqual(wrapped, withoutCapture({ ...plain })),
    'the JSONP answer is the XHR answer, with or without capture',
  )
  return plain as ConfigAnswer
}

/**
 * A real server whose settings come from environment variables, as a deployment sets them;
 * open to anyone (`UEDITOR_AUTH=none`), as on a first run.
 */
async function startWithEnv(
  t: TestContext,
  env: NodeJS.ProcessEnv,
  config: ServerConfigInput = {},
) {
  const dataDir = await mkdtemp(join(tmpdir(), 'ueditor-cfg-'))
  const server = await startServer({
    env: { UEDITOR_AUTH: 'none', ...env },
    config: { logLevel: 'silent', ...config, dataDir, http: { host: '127.0.0.1', port: 0 } },
  })
  t.after(async () => {
    await server.close()
    await rm(dataDir, { recursive: true, force: true })
  })
  return server
}

async function uploadImage(srv: { url: string }): Promise<string> {
  const { body, contentType } = multipartBody([
    { name: 'upfile', filename: 'own.png', contentType: 'image/png', value: png(8, 8) },
  ])
  const res = await fetch(`${srv.url}/ueditor?action=image`, {
    method: 'POST',
    body,
    headers: { 'Content-Type': contentType },
  })
  const answer = (await res.json()) as { state: string; url: string }
  assert.equal(answer.state, 'SUCCESS')
  return answer.url
}

describe('catcherLocalDomain in the config answer', () => {
  test('the default answer lists the loopback names and nothing else', async (t) => {
    const srv = await startTestServer(t)
    const config = await configAnswer(srv.url)
    assert.deepEqual(config.catcherLocalDomain, ['127.0.0.1', 'localhost'])
  })

  test('with the README cross-origin settings, the answer lists the stored-file host, so the editor never sends the user’s own uploads to catch', async (t) => {
    const srv = await startWithEnv(t, {
      UEDITOR_CORS_ORIGINS: `https://${PAGE_HOST}`,
      UEDITOR_PUBLIC_URL: 'https://ue.example.com/uploads/',
    })
    const config = await configAnswer(srv.url)
    assert.deepEqual(config.catcherLocalDomain, ['127.0.0.1', 'localhost', 'ue.example.com'])
    const own = await uploadImage(srv)
    assert.match(own, /^https:\/\/ue\.example\.com\/uploads\/image\//)
    assert.equal(editorSendsToCatch(own, config.catcherLocalDomain), false)
    // An image from elsewhere is still sent to catch (where catch is answered, see below).
    assert.equal(
      editorSendsToCatch('https://news.example.net/photo.jpg', config.catcherLocalDomain),
      true,
    )
  })

  test('a stored-file URL with a port and a CDN in the URL prefixes are listed as written', async (t) => {
    const srv = await startWithEnv(t, {
      UEDITOR_CORS_ORIGINS: `https://${PAGE_HOST}`,
      UEDITOR_PUBLIC_URL: 'https://Files.Example.com:8443/ueditor/uploads/',
      UEDITOR_URL_PREFIX: 'https://cdn.example.net',
    })
    const config = await configAnswer(srv.url)
    assert.deepEqual(config.catcherLocalDomain, [
      '127.0.0.1',
      'localhost',
      'Files.Example.com:8443',
      'files.example.com:8443',
      'cdn.example.net',
    ])
    const own = await uploadImage(srv)
    // What the editor inserts is the prefix followed by the answer's URL.
    for (const src of [`https://cdn.example.net${own}`, own, own.toLowerCase()])
      assert.equal(editorSendsToCatch(src, config.catcherLocalDomain), false, src)
  })

  test('a protocol-relative files route names its host too', async (t) => {
    const srv = await startTestServer(t, { routes: { files: '//static.example.org/uploads' } })
    const config = await configAnswer(srv.url)
    assert.deepEqual(config.catcherLocalDomain, ['127.0.0.1', 'localhost', 'static.example.org'])
  })

  test('a host allowed for capture on loopback is not covered by any entry the browser gets, and its images are captured', async (t) => {
    const origin = await startOriginServer(t, await originImages())
    const srv = await startWithEnv(t, { UEDITOR_CATCHER_ALLOW_HOSTS: origin.host })
    const config = await configAnswer(srv.url)
    // `127.0.0.1` would match every loopback URL; it is narrowed to the port-less form.
    assert.deepEqual(config.catcherLocalDomain, ['127.0.0.1/', 'localhost'])
    const source = origin.url('/a.png')
    assert.equal(editorSendsToCatch(source, config.catcherLocalDomain), true)
    const res = await fetch(`${srv.url}/ueditor?action=catch`, {
      method: 'POST',
      body: new URLSearchParams({ 'source[]': source }),
    })
    const entry = ((await res.json()) as { list: { state: string; url: string }[] }).list[0]
    assert.equal(entry?.state, 'SUCCESS')
    assert.match(entry?.url ?? '', /^\/uploads\/catch\//)
    // The server's own check is unchanged: other loopback ports stay local.
    const other = await fetch(`${srv.url}/ueditor?action=catch`, {
      method: 'POST',
      body: new URLSearchParams({ 'source[]': 'http://127.0.0.1:9/x.png' }),
    })
    const refused = ((await other.json()) as { list: { code: string }[] }).list[0]
    assert.equal(refused?.code, 'UE_REMOTE_LOCAL_DOMAIN')
  })

  test('an allowed host without a port drops every entry its URLs contain', () => {
    const cfg = loadConfig({
      env: {
        UEDITOR_CATCHER_ALLOW_HOSTS: 'img.intranet,127.0.0.1',
        UEDITOR_CATCHER_LOCAL_DOMAIN: 'intranet,img.intranet:8080,127.0.0.1,other.example',
        PORT: '8080',
      },
    })
    assert.deepEqual(publicEditorConfig(cfg).catcherLocalDomain, ['other.example'])
    // The server itself keeps the whole list; allow-listed hosts are exempt there.
    assert.deepEqual(cfg.editor.catcherLocalDomain, [
      'intranet',
      'img.intranet:8080',
      '127.0.0.1',
      'other.example',
    ])
  })

  test('a bare host narrowed for an allowed port keeps this server’s own port', () => {
    const cfg = loadConfig({
      env: { UEDITOR_CATCHER_ALLOW_HOSTS: '127.0.0.1:27410', PORT: '8080' },
    })
    const list = publicEditorConfig(cfg).catcherLocalDomain as string[]
    assert.deepEqual(list, ['127.0.0.1/', '127.0.0.1:8080', 'localhost'])
    assert.equal(editorSendsToCatch('http://127.0.0.1:27410/a.png', list), true)
    assert.equal(editorSendsToCatch('http://127.0.0.1:8080/uploads/a.png', list), false)
    assert.equal(editorSendsToCatch('http://127.0.0.1/a.png', list), false)
  })

  test('an empty UEDITOR_CATCHER_LOCAL_DOMAIN clears the list, and the server’s own hosts stay', async (t) => {
    const cleared = await startWithEnv(t, { UEDITOR_CATCHER_LOCAL_DOMAIN: '' })
    assert.deepEqual((await configAnswer(cleared.url)).catcherLocalDomain, [])
    const own = await startWithEnv(t, {
      UEDITOR_CATCHER_LOCAL_DOMAIN: '',
      UEDITOR_PUBLIC_URL: 'https://ue.example.com/uploads/',
    })
    assert.deepEqual((await configAnswer(own.url)).catcherLocalDomain, ['ue.example.com'])
  })
})

/** The first entry of a JSONP catch of `source`, sent with the editor's `serverUrl` query. */
async function jsonpCatch(url: string, query: string, source: string) {
  const text = await (
    await fetch(
      `${url}/ueditor?${query}source%5B%5D=${encodeURIComponent(source)}&action=catch&callback=bd__editor__c1`,
    )
  ).text()
  const wrapped = /^\/\*\*\/bd__editor__c1\((.*)\);$/s.exec(text)
  assert.ok(wrapped, text.slice(0, 80))
  return (JSON.parse(wrapped[1] as string) as { list: { state: string; code?: string }[] }).list[0]
}

const CATCH_TOKEN = 'catch-token-0123456789abcdef'
/** Refusals of a JSONP catch before anything is fetched: the JSONP rule or its credential. */
const REFUSED_BEFORE_CATCH = ['UE_REMOTE_JSONP_DISABLED', 'UE_UNAUTHORIZED', 'UE_FORBIDDEN']

describe('capture over JSONP in the config answer', () => {
  test('with the README cross-origin settings, the JSONP answer turns capture off and leaves every remote picture to the page', async (t) => {
    const srv = await startWithEnv(t, {
      UEDITOR_CORS_ORIGINS: `https://${PAGE_HOST}`,
      UEDITOR_PUBLIC_URL: 'https://ue.example.com/uploads/',
    })
    const plain = await configAnswer(srv.url)
    const jsonp = await jsonpConfigAnswer(srv.url)
    assert.equal(jsonp.catchRemoteImageEnable, false)
    assert.equal(plain.catchRemoteImageEnable, undefined, 'the XHR answer leaves it to the page')
    for (const src of [
      'https://news.example.net/photo.jpg',
      'http://203.0.113.9:8080/a.png',
      'ftp://files.example.org/b.gif',
      'HTTP://EXAMPLE.COM/C.PNG',
    ])
      assert.equal(editorSendsToCatch(src, jsonp.catcherLocalDomain), false, src)
    // The rest of the answer is the XHR one.
    assert.deepEqual(
      { ...jsonp, catchRemoteImageEnable: undefined, catcherLocalDomain: undefined },
      { ...plain, catchRemoteImageEnable: undefined, catcherLocalDomain: undefined },
    )
  })

  test('capture stays on over JSONP exactly where the editor’s JSONP catch is answered', async (t) => {
    const hook = { authorize: () => ({ user: 'alice' }) }
    const setups: [string, ServerConfigInput, string, typeof hook | undefined][] = [
      ['mode none, catch not over JSONP', {}, '', undefined],
      [
        'mode none, catch over JSONP',
        { http: { jsonpActions: ['config', 'list', 'catch'] } },
        '',
        undefined,
      ],
      [
        'tokens, the token in the serverUrl query',
        { auth: { tokens: [`alice:${CATCH_TOKEN}`], queryParam: 'token' } },
        `token=${CATCH_TOKEN}&`,
        undefined,
      ],
      [
        'tokens, catch over JSONP but no token in the query',
        {
          auth: { tokens: [`alice:${CATCH_TOKEN}`] },
          http: { jsonpActions: ['config', 'list', 'catch'] },
        },
        '',
        undefined,
      ],
      [
        'the hook, catch over JSONP',
        { http: { jsonpActions: ['config', 'list', 'catch'] } },
        '',
        hook,
      ],
      [
        'the hook, catch over JSONP and auth.hookJsonp',
        { auth: { hookJsonp: true }, http: { jsonpActions: ['config', 'list', 'catch'] } },
        '',
        hook,
      ],
    ]
    const seen: string[] = []
    for (const [name, config, query, options] of setups) {
      const srv = await startTestServer(t, config, options ?? {})
      const jsonp = await jsonpConfigAnswer(srv.url, query)
      const captureOn = jsonp.catchRemoteImageEnable !== false
      // A loopback source: a catch that is answered stops at the local-domain rule.
      const entry = await jsonpCatch(srv.url, query, 'http://127.0.0.1/x.png')
      const answered = !REFUSED_BEFORE_CATCH.includes(entry?.code ?? '')
      assert.equal(captureOn, answered, `${name}: capture ${captureOn}, catch ${entry?.code}`)
      assert.equal(
        editorSendsToCatch('https://news.example.net/photo.jpg', jsonp.catcherLocalDomain),
        captureOn,
        name,
      )
      seen.push(`${name}: ${captureOn ? 'on' : 'off'}`)
    }
    assert.deepEqual(seen, [
      'mode none, catch not over JSONP: off',
      'mode none, catch over JSONP: on',
      'tokens, the token in the serverUrl query: on',
      'tokens, catch over JSONP but no token in the query: off',
      'the hook, catch over JSONP: off',
      'the hook, catch over JSONP and auth.hookJsonp: on',
    ])
  })
})

describe('formulaConfig.editorMode in the config answer', () => {
  async function formulaConfig(srv: TestServer) {
    return (await configAnswer(srv.url)).formulaConfig
  }

  test('while this server renders the formulas, the dialog’s offline plain mode is the default', async (t) => {
    assert.deepEqual(await formulaConfig(await startTestServer(t)), {
      imageUrlTemplate: '/formula.svg?{}',
      editorMode: 'plain',
    })
    const absolute = await startTestServer(t, { publicUrl: 'https://ue.example.com/uploads/' })
    assert.deepEqual(await formulaConfig(absolute), {
      imageUrlTemplate: 'https://ue.example.com/formula.svg?{}',
      editorMode: 'plain',
    })
    // The operator's own template on this server counts as this server's.
    const own = await startTestServer(t, {
      editor: { formulaConfig: { imageUrlTemplate: 'https://ue.example.com/formula.png?{}' } },
    })
    assert.equal((await formulaConfig(own))?.editorMode, 'plain')
  })

  test('an operator’s mode or live server, and a template elsewhere, are left as configured', async (t) => {
    const live = await startTestServer(t, { editor: { formulaConfig: { editorMode: 'live' } } })
    assert.deepEqual(await formulaConfig(live), {
      editorMode: 'live',
      imageUrlTemplate: '/formula.svg?{}',
    })
    const server = await startTestServer(t, {
      editor: { formulaConfig: { editorLiveServer: 'https://latex.intranet' } },
    })
    assert.deepEqual(await formulaConfig(server), {
      editorLiveServer: 'https://latex.intranet',
      imageUrlTemplate: '/formula.svg?{}',
    })
    const elsewhere = await startTestServer(t, {
      editor: { formulaConfig: { imageUrlTemplate: 'https://math.example.com/svg?{}' } },
    })
    assert.deepEqual(await formulaConfig(elsewhere), {
      imageUrlTemplate: 'https://math.example.com/svg?{}',
    })
    const off = await startTestServer(t, { formula: { enabled: false } })
    assert.equal(await formulaConfig(off), undefined)
  })
})
