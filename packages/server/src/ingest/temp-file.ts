import { createHash, randomUUID } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, readdir, rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { UeError } from '../shared/errors.js'
import { isProcessAlive } from '../shared/process-alive.js'

/** A spooled upload on local disk. `originalName` is client-supplied and only ever echoed. */
export interface TempFile {
  readonly path: string
  readonly size: number
  readonly sha256: string
  readonly originalName: string
  dispose(): Promise<void>
}

/** A per-request spool folder, removed as a whole when the request ends. */
export interface Spool {
  readonly dir: string
  write(source: Readable, maxSize: number, originalName: string): Promise<TempFile>
  dispose(): Promise<void>
}

export async function createSpool(tempRoot: string): Promise<Spool> {
  // The owner's pid in the name lets a later start tell a dead process's leftovers from a live one's.
  const dir = join(tempRoot, `req-${process.pid}-${randomUUID()}`)
  await mkdir(dir, { recursive: true })
  let disposed = false
  return {
    dir,
    write: (source, maxSize, originalName) => spoolStream(dir, source, maxSize, originalName),
    async dispose() {
      if (disposed) return
      disposed = true
      await rm(dir, { recursive: true, force: true })
    },
  }
}

/**
 * Removes the spool folders of processes that are gone (a crash or `kill -9` mid-upload), so
 * they do not pile up. Folders of live processes sharing the temp root are left alone.
 */
export async function removeStaleSpools(tempRoot: string): Promise<number> {
  const names = await readdir(tempRoot).catch(() => [] as string[])
  let removed = 0
  for (const name of names) {
    const match = /^req-(?:(\d+)-)?[0-9a-f-]{36}$/.exec(name)
    if (!match) continue
    const pid = match[1] === undefined ? undefined : Number(match[1])
    if (pid !== undefined && (pid === process.pid || isProcessAlive(pid))) continue
    await rm(join(tempRoot, name), { recursive: true, force: true })
    removed++
  }
  return removed
}

/** Streams into a new file, hashing and counting; past `maxSize` it stops and deletes it. */
async function spoolStream(
  dir: string,
  source: Readable,
  maxSize: number,
  originalName: string,
): Promise<TempFile> {
  const path = join(dir, randomUUID())
  const hash = createHash('sha256')
  let size = 0
  try {
    await pipeline(
      source,
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          size += chunk.length
          if (size > maxSize) throw new UeError('UE_FILE_TOO_LARGE')
          hash.update(chunk)
          yield chunk
        }
      },
      createWriteStream(path, { flags: 'wx' }),
    )
  } catch (e) {
    await rm(path, { force: true })
    throw e
  }
  return tempFileAt(path, size, hash.digest('hex'), originalName)
}

/** A fresh path next to `file`, so derived bytes live (and are removed) with the request spool. */
export function siblingPath(file: TempFile): string {
  return join(dirname(file.path), randomUUID())
}

/** Describes bytes another writer (an image encoder) already put at `path` as a TempFile. */
export async function describeFile(path: string, originalName: string): Promise<TempFile> {
  const hash = createHash('sha256')
  let size = 0
  for await (const chunk of createReadStream(path)) {
    size += (chunk as Buffer).length
    hash.update(chunk as Buffer)
  }
  return tempFileAt(path, size, hash.digest('hex'), originalName)
}

function tempFileAt(path: string, size: number, sha256: string, originalName: string): TempFile {
  return { path, size, sha256, originalName, dispose: () => rm(path, { force: true }) }
}
