import assert from 'node:assert/strict'
import { eventually } from '../helpers/eventually.js'
import { png } from '../helpers/fixtures.js'
import { solid } from '../helpers/images.js'
import { type EditorAnswer, uploadFrom } from '../helpers/post-from.js'
import { metric, startTestServer } from '../helpers/start-server.js'
import { test } from '../helpers/test.js'

interface Timed extends EditorAnswer {
  doneAt: number
}

test('two clients flooding heavy images neither starve a third client nor queue without bound', {
  timeout: 180_000,
}, async (t) => {
  const srv = await startTestServer(t, {
    images: { concurrency: 1, maxQueuedPerClient: 2, timeoutSeconds: 120 },
  })
  // 49 megapixels each: cheap to send, costly to decode and re-encode.
  const heavy = await solid(7000, 7000, '#48c').png({ compressionLevel: 9 }).toBuffer()
  const timed = (address: string, value: Buffer, name: string) =>
    uploadFrom(srv, address, [{ name: 'upfile', filename: name, value }]).then(
      (a): Timed => ({ ...a, doneAt: Date.now() }),
    )
  const floods = ['127.0.0.2', '127.0.0.3'].map((address) =>
    Promise.all(Array.from({ length: 5 }, () => timed(address, heavy, 'heavy.png'))),
  )
  // Both floods fill their share of the queue (two waiting each) before the small image is sent.
  const waiting = await eventually(() => metric(srv, 'ueditor_image_queue_waiting'), {
    until: (n) => n === 4,
    timeoutMs: 30_000,
    what: 'four images waiting in the queue',
  })
  assert.equal(waiting, 4, 'the floods never filled the image queue')
  const small = await timed('127.0.0.4', png(4, 4), 'small.png')
  const [a, b] = (await Promise.all(floods)) as [Timed[], Timed[]]

  assert.equal(small.state, 'SUCCESS')
  for (const [name, answers] of [
    ['first', a],
    ['second', b],
  ] as const) {
    const codes = new Set(answers.map((x) => x.code ?? x.state))
    // Past two waiting images a client is refused, readably, instead of growing the queue.
    assert.ok(codes.has('UE_BUSY'), `${name} flood was never refused: ${[...codes]}`)
    assert.ok(codes.has('SUCCESS'), `${name} flood was never served: ${[...codes]}`)
    assert.deepEqual(
      [...codes].filter((c) => c !== 'UE_BUSY' && c !== 'SUCCESS'),
      [],
    )
  }
  // Round robin: the small image waited for at most one heavy image per client, not for both
  // floods (in arrival order it would have been done last, after four waiting heavy images).
  const heavyDone = [...a, ...b].filter((x) => x.state === 'SUCCESS').map((x) => x.doneAt)
  assert.ok(heavyDone.length >= 3, `${heavyDone.length} heavy images served`)
  assert.ok(small.doneAt < Math.max(...heavyDone), 'the small image waited behind both floods')
})
