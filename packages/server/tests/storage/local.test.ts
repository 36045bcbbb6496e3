import assert from 'node:assert/strict'
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Readable } from 'node:stream'
import { isUeError, UeError } from '../../src/shared/errors.js'
import type { StorageKey } from '../../src/shared/types.js'
import { localDiskStorage } from '../../src/storage/local.js'
import { failingBody, storageDriverContract } from '../contracts/storage-driver.contract.js'
import { after, before, describe, test } from '../helpers/test.js'

storageDriverContract('local disk', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'ue-local-contract-'))
  return {
    driver: localDiskStorage({ root }),
    cleanup: () => rm(root, { recursive: true, force: true }),
  }
})

async function listAll(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true })
  return entries.map((e) => e.split(path.sep).join('/')).sort()
}

describe('localDiskStorage', () => {
  // `outer` holds `root`, so anything escaping the root by one level would land in `outer`.
  let outer: string
  let root: string

  before(async () => {
    outer = await mkdtemp(path.join(tmpdir(), 'ue-local-'))
    root = path.join(outer, 'root')
  })
  after(async () => {
    await rm(outer, { recursive: true, force: true })
  })

  test('putFile publishes a file by linking it, without a copy and without a .part file', async () => {
    const storage = localDiskStorage({ root })
    const source = path.join(outer, 'spooled-upload')
    await writeFile(source, 'spooled bytes')
    const key = 'file/20261124/linked.bin' as StorageKey
    await storage.putFile?.(key, source, { size: 13, contentType: 'application/octet-stream' })
    const stored = path.join(root, key)
    assert.equal((await stat(stored)).ino, (await stat(source)).ino)
    await rm(source)
    assert.equal(await readFile(stored, 'utf8'), 'spooled bytes')
    assert.deepEqual(
      (await listAll(root)).filter((f) => f.endsWith('.part')),
      [],
    )
  })

  test('putFile never replaces an existing object', async () => {
    const storage = localDiskStorage({ root })
    const key = 'file/20261124/taken.bin' as StorageKey
    const first = path.join(outer, 'first')
    const second = path.join(outer, 'second')
    await writeFile(first, 'first')
    await writeFile(second, 'second')
    const meta = { size: 5, contentType: 'application/octet-stream' }
    await storage.putFile?.(key, first, meta)
    await assert.rejects(
      storage.putFile?.(key, second, meta) ?? Promise.resolve(),
      (e: unknown) => {
        return isUeError(e) && e.code === 'UE_STORAGE_FAILED' && e.detail === 'exists'
      },
    )
    assert.equal(await readFile(path.join(root, key), 'utf8'), 'first')
  })

  test('putFile copies a file from another file system, where it cannot be linked', async () => {
    // /dev/shm is a tmpfs on Linux: a different device from the temp folder's disk.
    const elsewhere = await mkdtemp('/dev/shm/ue-local-')
    try {
      const source = path.join(elsewhere, 'spooled-upload')
      await writeFile(source, 'from another device')
      assert.notEqual((await stat(elsewhere)).dev, (await stat(outer)).dev)
      const storage = localDiskStorage({ root })
      const key = 'file/20261124/copied.bin' as StorageKey
      await storage.putFile?.(key, source, { size: 19, contentType: 'application/octet-stream' })
      assert.equal(await readFile(path.join(root, key), 'utf8'), 'from another device')
      assert.deepEqual(
        (await listAll(root)).filter((f) => f.endsWith('.part')),
        [],
      )
    } finally {
      await rm(elsewhere, { recursive: true, force: true })
    }
  })

  test('a failed write leaves no .part file and no object behind', async () => {
    const storage = localDiskStorage({ root })
    const key = 'file/20261123/broken.bin' as StorageKey
    await assert.rejects(
      storage.put(key, failingBody(Buffer.alloc(64 * 1024, 1)), {
        size: 1_000_000,
        contentType: 'application/octet-stream',
      }),
    )
    const files = await listAll(root)
    assert.deepEqual(
      files.filter((f) => f.endsWith('.part')),
      [],
    )
    assert.ok(!files.includes('file/20261123/broken.bin'))
  })

  test('a successful write leaves only the published file', async () => {
    const storage = localDiskStorage({ root })
    const key = 'image/20261123/1763890000abc123.png' as StorageKey
    await storage.put(key, Readable.from([Buffer.from('png bytes')]), {
      size: 9,
      contentType: 'image/png',
    })
    const files = await listAll(path.join(root, 'image'))
    assert.deepEqual(files, ['20261123', '20261123/1763890000abc123.png'])
  })

  test('an error from the body is passed through unchanged when it is a UeError', async () => {
    const storage = localDiskStorage({ root })
    const body = new Readable({
      read() {
        this.destroy(new UeError('UE_FILE_TOO_LARGE'))
      },
    })
    await assert.rejects(
      storage.put('file/too-large.bin' as StorageKey, body, { size: 1, contentType: 'x/y' }),
      (e: unknown) => isUeError(e) && e.code === 'UE_FILE_TOO_LARGE',
    )
  })

  test('keys that try to escape the root are refused and nothing is written outside it', async () => {
    const storage = localDiskStorage({ root })
    const snapshot = await listAll(outer)
    const escapes = [
      '../x',
      '/etc/x',
      'a/../../x',
      '..',
      'a/..',
      '',
      'a\0b',
      '..\\x',
      path.join(outer, 'abs.txt'),
    ]
    for (const key of escapes) {
      const k = key as StorageKey
      const isKeyInvalid = (e: unknown) => isUeError(e) && e.code === 'UE_KEY_INVALID'
      await assert.rejects(
        storage.put(k, Readable.from([Buffer.from('pwned')]), { size: 5, contentType: 'x/y' }),
        isKeyInvalid,
        `put ${JSON.stringify(key)}`,
      )
      await assert.rejects(storage.get(k), isKeyInvalid, `get ${JSON.stringify(key)}`)
      await assert.rejects(storage.stat(k), isKeyInvalid, `stat ${JSON.stringify(key)}`)
      await assert.rejects(storage.delete(k), isKeyInvalid, `delete ${JSON.stringify(key)}`)
    }
    assert.deepEqual(await listAll(outer), snapshot)
  })

  test('a directory is not an object', async () => {
    const storage = localDiskStorage({ root })
    const key = 'file/dir-test/inner.txt' as StorageKey
    await storage.put(key, Readable.from([Buffer.from('x')]), {
      size: 1,
      contentType: 'text/plain',
    })
    const dir = 'file/dir-test' as StorageKey
    assert.equal(await storage.stat(dir), null)
    await assert.rejects(
      storage.get(dir),
      (e: unknown) => isUeError(e) && e.code === 'UE_NOT_FOUND',
    )
  })
})
