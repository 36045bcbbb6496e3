import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { toNodeHandler } from '../../src/http/node.js'
import { UeError } from '../../src/shared/errors.js'
import { errorParts } from '../../src/shared/respond.js'
import { startTestServer } from '../helpers/start-server.js'
import { test } from '../helpers/test.js'

// The server's own answers come from shared/respond.ts: the same status, headers and bytes.
async function assertAnswer(res: Response, expected: ReturnType<typeof errorParts>) {
  assert.equal(res.status, expected.status)
  for (const [name, value] of expected.headers) assert.equal(res.headers.get(name), value, name)
  assert.equal(await res.text(), expected.body)
}

test('the server answers a path it does not serve with the catalogue 404', async (t) => {
  const srv = await startTestServer(t)
  const res = await fetch(`${srv.url}/no/such/page?x=<script>`)
  await assertAnswer(res, errorParts(new UeError('UE_NOT_FOUND')))
  assert.ok(res.headers.get('x-request-id'))
})

test('the node bridge answers a failing handler with the catalogue 500 and keeps serving', async (t) => {
  let calls = 0
  const server = createServer(
    toNodeHandler(async () => {
      calls++
      if (calls === 1) throw new Error('a secret path /srv/data that must not leak')
      return new Response('fine')
    }),
  )
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const failed = await fetch(`${base}/x`)
  await assertAnswer(
    failed,
    errorParts(new UeError('UE_INTERNAL'), { headers: { Connection: 'close' } }),
  )
  assert.equal(await (await fetch(`${base}/x`)).text(), 'fine')
})
