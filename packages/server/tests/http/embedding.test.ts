import assert from 'node:assert/strict'
import { toNodeHandler, type UeditorServer } from '../../src/index.js'
import { blob, MP4, png } from '../helpers/fixtures.js'
import { hostApp } from '../helpers/host-app.js'
import { startTestServer } from '../helpers/start-server.js'
import { test } from '../helpers/test.js'

test('the editor handler mounted at any path of a host app routes on ?action= alone', async (t) => {
  const base = await hostApp(t, (ue) => {
    const editor = toNodeHandler(ue.editor)
    const files = toNodeHandler(ue.files)
    return (req, res) => {
      if (req.url?.startsWith('/api/v1/editor')) return editor(req, res)
      if (req.url?.startsWith('/uploads/')) return files(req, res)
      res.writeHead(418).end('host app')
    }
  })
  const form = new FormData()
  form.append('upfile', blob(png()), 'a.png')
  const up = await (
    await fetch(`${base}/api/v1/editor?action=image`, { method: 'POST', body: form })
  ).json()
  assert.equal(up.state, 'SUCCESS')
  const served = await fetch(`${base}${up.url}`)
  assert.equal(served.status, 200)
  assert.equal((await fetch(`${base}/other`)).status, 418)
})

test('the node handler of createUeditorServer serves the whole standalone surface', async (t) => {
  const base = await hostApp(t, (ue) => ue.node)
  assert.equal((await (await fetch(`${base}/healthz`)).json()).status, 'ok')
  assert.equal(
    (await (await fetch(`${base}/ueditor?action=config`)).json()).videoActionName,
    'video',
  )
})

test('an uploaded video is served with byte ranges for seeking', async (t) => {
  const srv = await startTestServer(t)
  const form = new FormData()
  form.append('file', blob(MP4, 'video/mp4'), 'clip.mp4')
  const up = await (await fetch(srv.action('video'), { method: 'POST', body: form })).json()
  const res = await fetch(`${srv.url}${up.url}?noCache=1`, { headers: { Range: 'bytes=4-11' } })
  assert.equal(res.status, 206)
  assert.equal(res.headers.get('content-range'), `bytes 4-11/${MP4.length}`)
  assert.equal(Buffer.from(await res.arrayBuffer()).toString('latin1'), 'ftypmp42')
  assert.equal(res.headers.get('content-type'), 'video/mp4')
})

test('ue.fetch answers a host’s own Request with a Response its runtime can read natively', async (t) => {
  let ue!: UeditorServer
  await hostApp(t, (server) => {
    ue = server
    return server.node
  })
  // As Bun.serve and Deno.serve read an answer: through Response.prototype's own members.
  const native = Response.prototype
  const status = Object.getOwnPropertyDescriptor(native, 'status')?.get as () => number
  const headers = Object.getOwnPropertyDescriptor(native, 'headers')?.get as () => Headers
  for (const [path, code] of [
    ['/ueditor?action=config', 200],
    ['/healthz', 200],
    ['/nowhere', 404],
  ] as const) {
    const answer = await ue.fetch(new Request(`http://127.0.0.1${path}`))
    assert.equal(status.call(answer), code, path)
    assert.match(headers.call(answer).get('content-type') ?? '', /^application\/json/, path)
    assert.ok(JSON.parse(await native.text.call(answer)), path)
  }
  // The host's server owns the connection: a refused upload asks it to close nothing.
  const refused = await ue.fetch(
    new Request('http://127.0.0.1/ueditor?action=image', { method: 'POST', body: 'not a form' }),
  )
  assert.notEqual(((await refused.json()) as { state: string }).state, 'SUCCESS')
  assert.equal(refused.headers.get('connection'), null)
})
