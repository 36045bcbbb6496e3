import assert from 'node:assert/strict'
import { createWriteStream } from 'node:fs'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough, Readable, Transform, Writable } from 'node:stream'
import { pump } from '../../src/shared/pump.js'
import { describe, test } from '../helpers/test.js'

async function inTemp(work: (dir: string) => Promise<void>) {
  const dir = await mkdtemp(join(tmpdir(), 'ue-pump-'))
  try {
    await work(dir)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

const upper = () =>
  new Transform({
    transform(chunk: Buffer, _encoding, done) {
      done(null, chunk.toString().toUpperCase())
    },
  })

describe('pump', () => {
  test('it pipes every stream into the next and resolves once the file is written and closed', () =>
    inTemp(async (dir) => {
      const file = join(dir, 'out')
      const out = createWriteStream(file)
      await pump([Readable.from(['ab', 'cd']), upper(), out])
      assert.equal(out.closed, true)
      assert.equal(await readFile(file, 'utf8'), 'ABCD')
    }))

  test('a failing stage destroys every stream and rejects with its error after the file has closed', () =>
    inTemp(async (dir) => {
      const source = new PassThrough()
      const refuse = new Transform({
        transform(_chunk, _encoding, done) {
          done(new Error('refused'))
        },
      })
      const out = createWriteStream(join(dir, 'out'))
      const pumped = pump([source, refuse, out])
      source.write('x')
      await assert.rejects(pumped, /refused/)
      assert.equal(source.destroyed, true)
      assert.equal(out.destroyed, true)
      assert.equal(out.closed, true)
    }))

  test('an abort ends a stalled pump with the signal reason and leaves no stream open', async () => {
    const source = new PassThrough()
    const sink = new Writable({
      write(_chunk, _encoding, done) {
        done()
      },
    })
    const controller = new AbortController()
    const pumped = pump([source, sink], controller.signal)
    controller.abort(new Error('deadline'))
    await assert.rejects(pumped, /deadline/)
    assert.equal(source.destroyed, true)
    assert.equal(sink.destroyed, true)
  })

  test('a signal aborted before the start rejects at once and writes nothing', () =>
    inTemp(async (dir) => {
      const controller = new AbortController()
      controller.abort('gone')
      const file = join(dir, 'out')
      await assert.rejects(
        pump([Readable.from(['data']), createWriteStream(file)], controller.signal),
        /aborted/,
      )
      const written = await stat(file).then(
        (s) => s.size,
        () => 0,
      )
      assert.equal(written, 0)
    }))

  test('a source that closes before its end rejects as a premature close', async () => {
    const source = new PassThrough()
    const pumped = pump([source, new PassThrough().resume()])
    source.write('partial')
    source.destroy()
    await assert.rejects(pumped, { code: 'ERR_STREAM_PREMATURE_CLOSE' })
  })
})
