import assert from 'node:assert/strict'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { catchUrls } from '../helpers/catch.js'
import { type OriginImages, originImages, startOriginServer } from '../helpers/origin-server.js'
import { startTestServer } from '../helpers/start-server.js'
import { before, test } from '../helpers/test.js'

// The same as running this file with --expose-gc: a collection can be forced at will.
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

let images: OriginImages
before(async () => {
  images = await originImages()
})

test('catch deadlines fire for every capture of a never-ending source, through forced garbage collections', {
  timeout: 120_000,
}, async (t) => {
  const origin = await startOriginServer(t, images)
  const srv = await startTestServer(t, {
    catcher: { allowHosts: [origin.host], timeoutMs: 2_000, requestTimeoutMs: 4_000 },
    editor: { catcherLocalDomain: [] },
    limits: { uploadsPerMinute: 0, concurrentUploads: 0 },
  })
  const collector = setInterval(gc, 50)
  t.after(() => clearInterval(collector))
  const started = Date.now()
  // Each source sends a byte a second for ever; only our deadlines can end these captures.
  const answers = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      catchUrls(srv, [origin.url(`/drip.png?a=${i}`), origin.url(`/drip.png?b=${i}`)]),
    ),
  )
  const elapsed = Date.now() - started
  for (const answer of answers)
    for (const entry of answer.list) assert.equal(entry.code, 'UE_REMOTE_FAILED')
  // Far below the test's own time-out: the deadlines fired, not the test runner.
  assert.ok(elapsed < 60_000, `took ${elapsed} ms`)
})
