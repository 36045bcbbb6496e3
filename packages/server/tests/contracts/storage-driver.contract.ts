import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import { buffer } from 'node:stream/consumers'
import { isUeError } from '../../src/shared/errors.js'
import type { StorageKey } from '../../src/shared/types.js'
import { compareKeys, type PutMeta, type StorageDriver } from '../../src/storage/driver.js'
import { after, before, describe, test } from '../helpers/test.js'

export interface DriverFixture {
  driver: StorageDriver
  cleanup(): Promise<void>
}

let counter = 0
/** A fresh key per test so tests never depend on each other's objects. */
function freshKey(folder = 'file', ext = 'bin'): StorageKey {
  counter += 1
  return `${folder}/20261123/${Date.now()}${counter}${randomBytes(4).toString('hex')}.${ext}` as StorageKey
}

function meta(bytes: Uint8Array, contentType = 'application/octet-stream'): PutMeta {
  return { size: bytes.byteLength, contentType }
}

/** Yields the bytes in several chunks, like an upload arriving over the network. */
function chunked(bytes: Buffer, chunkSize = 1000): Readable {
  const chunks: Buffer[] = []
  for (let i = 0; i < bytes.length; i += chunkSize) chunks.push(bytes.subarray(i, i + chunkSize))
  return Readable.from(chunks)
}

/** Emits some bytes, then fails, like a client that disconnects mid-upload. */
export function failingBody(prefix: Buffer, message = 'client went away'): Readable {
  let sent = false
  return new Readable({
    read() {
      if (!sent) {
        sent = true
        this.push(prefix)
        return
      }
      setImmediate(() => this.destroy(new Error(message)))
    },
  })
}

function isCode(code: string) {
  return (e: unknown) => isUeError(e) && e.code === code
}

/**
 * The behaviour every StorageDriver must have. `make` is called once per suite; the driver is
 * shared by the tests, each of which uses its own keys.
 */
export function storageDriverContract(name: string, make: () => Promise<DriverFixture>): void {
  describe(`StorageDriver contract: ${name}`, () => {
    let fixture: DriverFixture
    const driver = () => fixture.driver

    before(async () => {
      fixture = await make()
    })
    after(async () => {
      await fixture.driver.close?.()
      await fixture.cleanup()
    })

    test('an object that was put can be read back with the same bytes and size', async () => {
      const key = freshKey('image', 'png')
      const bytes = randomBytes(10_000)
      await driver().put(key, chunked(bytes), meta(bytes, 'image/png'))

      const got = await driver().get(key)
      assert.equal(got.size, bytes.length)
      assert.deepEqual(await buffer(got.body), bytes)
      assert.deepEqual(await driver().stat(key), { size: bytes.length })
    })

    test('an empty object can be stored and read back', async () => {
      const key = freshKey()
      await driver().put(key, Readable.from([]), meta(new Uint8Array(0)))
      const got = await driver().get(key)
      assert.equal(got.size, 0)
      assert.equal((await buffer(got.body)).length, 0)
    })

    test('a ranged get returns exactly the requested inclusive slice and the full size', async () => {
      const key = freshKey()
      const bytes = randomBytes(5000)
      await driver().put(key, chunked(bytes), meta(bytes))

      for (const [start, end] of [
        [0, 0],
        [0, 99],
        [1234, 4321],
        [4999, 4999],
        [4000, 4999],
      ] as const) {
        const got = await driver().get(key, { start, end })
        assert.equal(got.size, bytes.length, 'size is the size of the whole object')
        assert.deepEqual(await buffer(got.body), bytes.subarray(start, end + 1), `${start}-${end}`)
      }
    })

    test('putting a key that already exists fails and keeps the first content', async () => {
      const key = freshKey()
      const first = Buffer.from('first version')
      const second = Buffer.from('a second, longer version that must not win')
      await driver().put(key, Readable.from([first]), meta(first))

      await assert.rejects(
        driver().put(key, Readable.from([second]), meta(second)),
        isCode('UE_STORAGE_FAILED'),
      )
      const got = await driver().get(key)
      assert.equal(got.size, first.length)
      assert.deepEqual(await buffer(got.body), first)
    })

    test('a copy is a new object with the same bytes; the source stays and an existing key is never replaced', async () => {
      const from = freshKey('pending', 'bin')
      const to = freshKey('video', 'mp4')
      const bytes = randomBytes(70_000)
      await driver().put(from, chunked(bytes), meta(bytes))
      await driver().copy(from, to, meta(bytes, 'video/mp4'))
      assert.deepEqual(await buffer((await driver().get(to)).body), bytes)
      assert.deepEqual(await buffer((await driver().get(from)).body), bytes)

      const other = Buffer.from('another object')
      const taken = freshKey()
      await driver().put(taken, Readable.from([other]), meta(other))
      await assert.rejects(
        driver().copy(from, taken, meta(bytes)),
        (e) => isCode('UE_STORAGE_FAILED')(e) && (e as { detail?: string }).detail === 'exists',
      )
      assert.deepEqual(await buffer((await driver().get(taken)).body), other)
      await assert.rejects(
        driver().copy(freshKey(), freshKey(), meta(bytes)),
        isCode('UE_NOT_FOUND'),
      )
    })

    test('concurrent puts of the same key let exactly one writer win', async () => {
      const key = freshKey()
      const bodies = ['aaaa', 'bbbbbbbb', 'cccccccccccc'].map((s) => Buffer.from(s))
      const results = await Promise.allSettled(
        bodies.map((b) => driver().put(key, chunked(b, 2), meta(b))),
      )
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1)
      const got = await driver().get(key)
      const stored = await buffer(got.body)
      assert.ok(
        bodies.some((b) => b.equals(stored)),
        'the stored bytes are one whole body',
      )
      assert.equal(got.size, stored.length)
    })

    test('a body that errors midway leaves no object and the key can be written later', async () => {
      const key = freshKey()
      await assert.rejects(
        driver().put(key, failingBody(randomBytes(4096)), { size: 10_000, contentType: 'x/y' }),
      )
      assert.equal(await driver().stat(key), null)
      await assert.rejects(driver().get(key), isCode('UE_NOT_FOUND'))

      const bytes = Buffer.from('complete')
      await driver().put(key, Readable.from([bytes]), meta(bytes))
      assert.deepEqual(await buffer((await driver().get(key)).body), bytes)
    })

    test('stat of a missing key is null', async () => {
      assert.equal(await driver().stat(freshKey()), null)
      assert.equal(await driver().stat(freshKey('never-created-folder')), null)
    })

    test('get of a missing key fails with UE_NOT_FOUND', async () => {
      await assert.rejects(driver().get(freshKey()), isCode('UE_NOT_FOUND'))
      await assert.rejects(driver().get(freshKey(), { start: 0, end: 10 }), isCode('UE_NOT_FOUND'))
    })

    test('delete removes the object and is idempotent', async () => {
      const key = freshKey()
      const bytes = Buffer.from('to be deleted')
      await driver().put(key, Readable.from([bytes]), meta(bytes))

      await driver().delete(key)
      assert.equal(await driver().stat(key), null)
      await assert.rejects(driver().get(key), isCode('UE_NOT_FOUND'))
      await driver().delete(key)
      await driver().delete(freshKey())
    })

    test('keys with nested folders are stored independently of their siblings', async () => {
      const folder = `file/${randomBytes(6).toString('hex')}/23`
      const a = `${folder}/deep/a.txt` as StorageKey
      const b = `${folder}/deep/b.txt` as StorageKey
      const c = `${folder}/c.txt` as StorageKey
      for (const key of [a, b, c]) {
        const bytes = Buffer.from(`content of ${key}`)
        await driver().put(key, Readable.from([bytes]), meta(bytes, 'text/plain'))
      }
      for (const key of [a, b, c]) {
        assert.equal((await buffer((await driver().get(key)).body)).toString(), `content of ${key}`)
      }
      await driver().delete(b)
      assert.equal(await driver().stat(b), null)
      assert.notEqual(await driver().stat(a), null)
      assert.notEqual(await driver().stat(c), null)
    })

    test('list yields every object once, in ascending byte order of the key, with size and modification time', async () => {
      const folder = `list${randomBytes(6).toString('hex')}`
      // '-' sorts before '/', and upper case before lower case: a naive folder walk gets these wrong.
      const names = ['a/b.txt', 'a-b.txt', 'a.txt', 'B.txt', 'a/c/d.txt', 'ab.txt']
      const startedAt = Date.now()
      for (const [i, name] of names.entries()) {
        const bytes = Buffer.alloc(i + 1, 'x')
        await driver().put(`${folder}/${name}` as StorageKey, Readable.from([bytes]), meta(bytes))
      }
      const listed: { key: string; size: number; modifiedAt: number }[] = []
      for await (const item of driver().list()) listed.push(item)

      const allKeys = listed.map((item) => item.key)
      assert.deepEqual(allKeys, [...allKeys].sort(compareKeys), 'the whole listing is sorted')
      assert.equal(new Set(allKeys).size, allKeys.length, 'no key is listed twice')
      const mine = listed.filter((item) => item.key.startsWith(`${folder}/`))
      const expected = names.map((name, i) => ({ key: `${folder}/${name}`, size: i + 1 }))
      expected.sort((a, b) => compareKeys(a.key, b.key))
      assert.deepEqual(
        mine.map(({ key, size }) => ({ key, size })),
        expected,
      )
      for (const item of mine) {
        // S3 keeps modification times to the second.
        assert.ok(item.modifiedAt >= startedAt - 2000, `${item.key} modified at ${item.modifiedAt}`)
        assert.ok(
          item.modifiedAt <= Date.now() + 2000,
          `${item.key} modified at ${item.modifiedAt}`,
        )
      }
    })

    test('list leaves out deleted objects and writes that have not finished', async () => {
      const folder = `list${randomBytes(6).toString('hex')}`
      const kept = `${folder}/kept.bin` as StorageKey
      const deleted = `${folder}/deleted.bin` as StorageKey
      const unfinished = `${folder}/unfinished.bin` as StorageKey
      for (const key of [kept, deleted]) {
        await driver().put(key, Readable.from([Buffer.from('bytes')]), meta(Buffer.from('bytes')))
      }
      await driver().delete(deleted)
      // A body that sends half of what it announced and then waits, like a slow client.
      const stalled = new Readable({ read() {} })
      stalled.push(Buffer.alloc(1000, 'y'))
      const writing = driver()
        .put(unfinished, stalled, { size: 2000, contentType: 'application/octet-stream' })
        .catch((e: unknown) => e)
      await new Promise((resolve) => setTimeout(resolve, 200))

      const keys: string[] = []
      for await (const item of driver().list()) if (item.key.startsWith(folder)) keys.push(item.key)
      assert.deepEqual(keys, [kept])

      stalled.destroy(new Error('client went away'))
      assert.ok((await writing) instanceof Error, 'the unfinished write failed')
      assert.equal(await driver().stat(unfinished), null)
    })
  })
}
