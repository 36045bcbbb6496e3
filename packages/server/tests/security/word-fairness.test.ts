import assert from 'node:assert/strict'
import { eventually } from '../helpers/eventually.js'
import { png } from '../helpers/fixtures.js'
import { INSTALL_LIBREOFFICE, redWmf, SOFFICE } from '../helpers/libreoffice.js'
import { type EditorAnswer, uploadFrom } from '../helpers/post-from.js'
import { metric, startTestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'

interface Timed extends EditorAnswer {
  doneAt: number
  ms: number
}

describe('Word picture conversions take turns between clients', () => {
  if (SOFFICE === null)
    test('without LibreOffice the tests say what to install', (t) => {
      if (process.env.CI === 'true') assert.fail(INSTALL_LIBREOFFICE)
      t.skip(INSTALL_LIBREOFFICE)
    })

  test('while one client floods WMF conversions, another client’s PNG upload answers within 1.5 s and a third client’s WMF is converted before the flood’s backlog', {
    skip: SOFFICE === null ? INSTALL_LIBREOFFICE : false,
    timeout: 180_000,
  }, async (t) => {
    // One conversion at once, four waiting per client (the defaults), eight waiting in all.
    const srv = await startTestServer(t, {
      images: { metafiles: { concurrency: 1, maxQueuedPerClient: 4, maxQueued: 8 } },
    })
    const wmf = redWmf()
    const timed = (address: string, value: Buffer, name: string) => {
      const began = Date.now()
      return uploadFrom(srv, address, [{ name: 'upfile', filename: name, value }]).then(
        (a): Timed => ({ ...a, doneAt: Date.now(), ms: Date.now() - began }),
      )
    }
    // A server that has handled a picture before: the first one loads the image library.
    const quiet = await timed('127.0.0.3', png(300, 200, { noise: true }), 'warm.png')
    assert.equal(quiet.state, 'SUCCESS', JSON.stringify(quiet))
    // Eight at once: one converts, four wait, three are refused at once.
    const flood = Promise.all(
      Array.from({ length: 8 }, (_, i) => timed('127.0.0.2', wmf, `flood${i}.wmf`)),
    )
    const waiting = await eventually(() => metric(srv, 'ueditor_image_queue_waiting'), {
      until: (n) => n === 4,
      timeoutMs: 30_000,
      what: 'four of the flood waiting in the conversion queue',
    })
    assert.equal(waiting, 4, 'the flood never filled its share of the conversion queue')

    const [photo, picture] = await Promise.all([
      timed('127.0.0.3', png(300, 200, { noise: true }), 'photo.png'),
      timed('127.0.0.4', wmf, 'chart.wmf'),
    ])
    const floodAnswers = await flood

    assert.equal(photo.state, 'SUCCESS', JSON.stringify(photo))
    assert.ok(photo.ms <= 1500, `the PNG upload took ${photo.ms} ms behind the conversions`)
    assert.equal(picture.state, 'SUCCESS', JSON.stringify(picture))
    const codes = floodAnswers.map((a) => a.code ?? a.state)
    assert.equal(codes.filter((c) => c === 'UE_BUSY').length, 3, codes.join(' '))
    assert.equal(codes.filter((c) => c === 'SUCCESS').length, 5, codes.join(' '))
    // Round robin: the third client's picture waited for at most the conversion running and
    // one of the flood's, not for the four the flood had waiting.
    const served = floodAnswers.filter((a) => a.state === 'SUCCESS').map((a) => a.doneAt)
    const after = served.filter((at) => at > picture.doneAt).length
    assert.ok(after >= 2, `only ${after} of the flood's conversions ended after the other client's`)
    t.diagnostic(
      `PNG upload: ${quiet.ms} ms quiet, ${photo.ms} ms during the flood; the other client's WMF: ${picture.ms} ms`,
    )
  })
})
