import { randomBytes } from 'node:crypto'
import type { Dirent } from 'node:fs'
import { createReadStream } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import { link, lstat, mkdir, open, readdir, stat, unlink } from 'node:fs/promises'
import path from 'node:path'
import type { Readable } from 'node:stream'
import { diskFullCode, isUeError, storageFull, UeError } from '../shared/errors.js'
import { isProcessAlive } from '../shared/process-alive.js'
import type { StorageKey } from '../shared/types.js'
import { checkedKey, checkRange } from './checks.js'
import { compareKeys, type ListedObject, type StorageDriver, type StoredObject } from './driver.js'

/**
 * Unfinished writes live in this folder under the root. No key can name it (a key segment never
 * starts with a dot), so a partial file is never served, listed or mistaken for an object.
 */
export const INCOMING_DIR = '.incoming'

/** Stores each object as a file under `root`; the key is the path relative to it. */
export function localDiskStorage(o: { root: string }): StorageDriver {
  const root = path.resolve(o.root)
  const incoming = path.join(root, INCOMING_DIR)

  function pathOf(key: StorageKey): string {
    const full = path.resolve(root, checkedKey(key))
    const rel = path.relative(root, full)
    if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) {
      throw new UeError('UE_KEY_INVALID')
    }
    return full
  }

  async function put(key: StorageKey, body: Readable): Promise<void> {
    const final = pathOf(key)
    // The writer's pid in the name lets the next start remove what a killed process left.
    const part = path.join(incoming, `${process.pid}-${randomBytes(8).toString('hex')}.part`)
    let fh: FileHandle
    try {
      await mkdir(path.dirname(final), { recursive: true })
      await mkdir(incoming, { recursive: true })
      fh = await open(part, 'wx')
    } catch (cause) {
      body.destroy()
      throw writeError(cause)
    }

    // Writing through our own handle (not a pipeline into a WriteStream) guarantees the file
    // is closed before we unlink it, so a failed write can never leave a `.part` behind.
    let failed = false
    let failure: unknown
    try {
      for await (const chunk of body) await writeAll(fh, chunk)
    } catch (e) {
      failed = true
      failure = e
    }
    try {
      await fh.close()
    } catch (e) {
      if (!failed) failure = e
      failed = true
    }
    if (failed) {
      await removeQuietly(part)
      throw isUeError(failure) ? failure : writeError(failure)
    }

    try {
      // link() refuses to replace an existing file, which makes publishing atomic and exclusive.
      await link(part, final)
    } catch (cause) {
      throw publishError(cause)
    } finally {
      await removeQuietly(part)
    }
  }

  /**
   * The file is hard-linked into place: no byte is copied, and like `put` it never replaces an
   * existing object. Across file systems (or where links are not supported) it is copied.
   */
  async function putFile(key: StorageKey, file: string): Promise<void> {
    const final = pathOf(key)
    try {
      // The folder usually exists already: it is made only when the link says it is missing.
      await link(file, final).catch(async (cause: unknown) => {
        if (errno(cause) !== 'ENOENT') throw cause
        await mkdir(path.dirname(final), { recursive: true })
        await link(file, final)
      })
    } catch (cause) {
      if (!LINK_UNSUPPORTED.has(errno(cause) ?? '')) throw publishError(cause)
      await put(key, createReadStream(file))
    }
  }

  /** A write that failed: `UE_STORAGE_FULL` when the volume (or the quota on it) is full. */
  function writeError(cause: unknown): UeError {
    return diskFullCode(cause)
      ? storageFull('store', root, cause)
      : new UeError('UE_STORAGE_FAILED', { cause })
  }

  function publishError(cause: unknown): UeError {
    if (errno(cause) === 'EEXIST')
      return new UeError('UE_STORAGE_FAILED', { detail: 'exists', cause })
    return writeError(cause)
  }

  return {
    kind: 'local',
    put,

    putFile,

    async copy(from: StorageKey, to: StorageKey): Promise<void> {
      const source = pathOf(from)
      const st = await stat(source).catch((cause: unknown) => {
        throw notFoundOr(cause)
      })
      if (!st.isFile()) throw new UeError('UE_NOT_FOUND')
      await putFile(to, source)
    },

    async get(key: StorageKey, range?: { start: number; end: number }): Promise<StoredObject> {
      const file = pathOf(key)
      checkRange(range)
      let fh: FileHandle
      try {
        fh = await open(file, 'r')
      } catch (cause) {
        throw notFoundOr(cause)
      }
      try {
        // Stat the open handle, not the path, so size and bytes always describe the same file.
        const st = await fh.stat()
        if (!st.isFile()) throw new UeError('UE_NOT_FOUND')
        const body = fh.createReadStream(range ? { start: range.start, end: range.end } : {})
        return { body, size: st.size }
      } catch (cause) {
        await fh.close().catch(() => {})
        throw isUeError(cause) ? cause : new UeError('UE_STORAGE_FAILED', { cause })
      }
    },

    async stat(key: StorageKey): Promise<{ size: number } | null> {
      const file = pathOf(key)
      try {
        const st = await stat(file)
        return st.isFile() ? { size: st.size } : null
      } catch (cause) {
        if (isMissing(cause)) return null
        throw new UeError('UE_STORAGE_FAILED', { cause })
      }
    },

    async delete(key: StorageKey): Promise<void> {
      const file = pathOf(key)
      try {
        await unlink(file)
      } catch (cause) {
        if (isMissing(cause)) return
        throw new UeError('UE_STORAGE_FAILED', { cause })
      }
    },

    list: () => listFiles(root, ''),
  }
}

/** link() fails with these where the spool and the root are on different or link-less file systems. */
const LINK_UNSUPPORTED = new Set(['EXDEV', 'EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EMLINK'])

/**
 * Removes the unfinished writes of processes that are gone (a crash or `kill -9` mid-write);
 * those of live processes sharing the root are left alone. Returns how many it removed.
 */
export async function removeStalePartFiles(root: string): Promise<number> {
  const dir = path.join(path.resolve(root), INCOMING_DIR)
  const names = await readdir(dir).catch(() => [] as string[])
  let removed = 0
  for (const name of names) {
    const pid = /^(\d+)-[0-9a-f]{16}\.part$/.exec(name)?.[1]
    if (pid === undefined || Number(pid) === process.pid || isProcessAlive(Number(pid))) continue
    await removeQuietly(path.join(dir, name))
    removed++
  }
  return removed
}

/**
 * Depth first, one folder in memory at a time. A folder sorts as its name plus '/', which makes
 * the walk yield keys in ascending byte order, as S3 lists them ('a-b' before 'a/b').
 * Names starting with a dot (the incoming folder) and anything but plain files are skipped.
 */
async function* listFiles(root: string, prefix: string): AsyncGenerator<ListedObject> {
  let entries: Dirent[]
  try {
    entries = await readdir(path.join(root, prefix), { withFileTypes: true })
  } catch (cause) {
    // No root yet, or a folder removed since its parent was read.
    if (isMissing(cause)) return
    throw new UeError('UE_STORAGE_FAILED', { cause })
  }
  const named = entries
    .filter((e) => !e.name.startsWith('.') && (e.isFile() || e.isDirectory()))
    .map((e) => ({ name: e.isDirectory() ? `${e.name}/` : e.name, entry: e }))
    .sort((a, b) => compareKeys(a.name, b.name))
  for (const { name, entry } of named) {
    if (entry.isDirectory()) {
      yield* listFiles(root, `${prefix}${name}`)
      continue
    }
    const key = `${prefix}${name}`
    try {
      const st = await lstat(path.join(root, key))
      if (st.isFile()) yield { key: key as StorageKey, size: st.size, modifiedAt: st.mtimeMs }
    } catch (cause) {
      // Deleted since the folder was read: it is simply no longer there.
      if (!isMissing(cause)) throw new UeError('UE_STORAGE_FAILED', { cause })
    }
  }
}

async function writeAll(fh: FileHandle, chunk: unknown): Promise<void> {
  const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Uint8Array)
  let offset = 0
  while (offset < buf.byteLength) {
    const { bytesWritten } = await fh.write(buf, offset, buf.byteLength - offset)
    offset += bytesWritten
  }
}

function errno(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string'
    ? e.code
    : undefined
}

function isMissing(e: unknown): boolean {
  const code = errno(e)
  return code === 'ENOENT' || code === 'ENOTDIR'
}

function notFoundOr(cause: unknown): UeError {
  return isMissing(cause) || errno(cause) === 'EISDIR'
    ? new UeError('UE_NOT_FOUND', { cause })
    : new UeError('UE_STORAGE_FAILED', { cause })
}

async function removeQuietly(file: string): Promise<void> {
  await unlink(file).catch(() => {})
}
