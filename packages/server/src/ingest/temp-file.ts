import { randomUUID } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { readdir, rm, stat, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { type Readable, Transform } from 'node:stream'
import { diskFullCode, isUeError, storageFull, UeError } from '../shared/errors.js'
import { type Metrics, noMetrics } from '../shared/metrics.js'
import { isProcessAlive } from '../shared/process-alive.js'
import { pump } from '../shared/pump.js'

/** A file in the temp spool. `originalName` is client-supplied and only ever echoed. */
export interface TempFile {
  readonly path: string
  readonly size: number
  readonly originalName: string
  dispose(): Promise<void>
}

/** A spooled upload, with its first bytes kept for sniffing (`HEAD_BYTES` of them at most). */
export interface SpooledFile extends TempFile {
  readonly head: Buffer
}

/**
 * How many leading bytes are kept and handed to `inspect`: enough for every magic-byte
 * signature we accept and for the text check.
 */
export const HEAD_BYTES = 64 * 1024

/**
 * How many bytes the spool file may hold back before the upload is paused. Chunks that arrive
 * while a write is in flight go out together in the next one (a single `writev`), so a large
 * upload costs a few thread-pool round trips per megabyte instead of one per 64 KB socket read;
 * each round trip costs the main thread tens of microseconds.
 */
const SPOOL_WRITE_BUFFER = 256 * 1024

/** Called once with the first bytes, before the rest is written; a throw ends the spool write. */
export type HeadInspector = (head: Buffer) => Promise<unknown>

/** The temp files of one request: each one is removed when the request ends. */
export interface Spool {
  write(
    source: Readable,
    maxSize: number,
    originalName: string,
    inspect?: HeadInspector,
  ): Promise<SpooledFile>
  dispose(): Promise<void>
}

/**
 * Spool files are single files directly in `tempRoot` (no folder per request). The owner's pid
 * in the name lets a later start tell a dead process's leftovers from a live one's.
 */
function newSpoolPath(tempRoot: string): string {
  return join(tempRoot, `req-${process.pid}-${randomUUID()}`)
}

/**
 * A request's spool in `tempRoot`. A write the temp folder refuses (full, or failing) is
 * `UE_STORAGE_FULL` or `UE_STORAGE_FAILED` and counted as a storage failure.
 */
export function createSpool(
  tempRoot: string,
  metrics: Pick<Metrics, 'dependencyFailed'> = noMetrics,
): Spool {
  const paths: string[] = []
  let disposed = false
  return {
    async write(source, maxSize, originalName, inspect) {
      if (disposed) throw new Error('spool already disposed')
      const path = newSpoolPath(tempRoot)
      paths.push(path)
      try {
        return await spoolStream(path, source, maxSize, originalName, inspect)
      } catch (e) {
        const failed = writeFailure(e, path, tempRoot)
        if (!failed) throw e
        metrics.dependencyFailed('storage', 'spool')
        throw failed
      }
    },
    async dispose() {
      if (disposed) return
      disposed = true
      await Promise.all(paths.map(removeFile))
    },
  }
}

/**
 * Removes the spool files (and the per-request folders of earlier versions) of processes that
 * are gone (a crash or `kill -9` mid-upload), so they do not pile up. Those of live processes
 * sharing the temp root are left alone.
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

/**
 * Streams into a new file, counting; past `maxSize` it stops and deletes it. The first bytes are
 * held in memory until the inspector has seen them, so a body it refuses is never written, and a
 * small upload reaches the disk in one write instead of one per socket read.
 */
async function spoolStream(
  path: string,
  source: Readable,
  maxSize: number,
  originalName: string,
  inspect: HeadInspector | undefined,
): Promise<SpooledFile> {
  let size = 0
  const headParts: Buffer[] = []
  let head: Buffer | undefined
  /** Inspects what is held, then passes it on as one chunk. */
  const releaseHead = async (push: (chunk: Buffer) => void) => {
    const held = Buffer.concat(headParts, size)
    headParts.length = 0
    head = held.subarray(0, HEAD_BYTES)
    // Nothing to inspect in an empty file: the caller refuses it as empty, not as mistyped.
    if (size > 0) await inspect?.(head)
    if (held.length > 0) push(held)
  }
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length
      if (size > maxSize) return done(new UeError('UE_FILE_TOO_LARGE'))
      if (head) return done(null, chunk)
      headParts.push(chunk)
      if (size < HEAD_BYTES) return done()
      releaseHead((held) => this.push(held)).then(() => done(), done)
    },
    flush(done) {
      if (head) done()
      else releaseHead((held) => this.push(held)).then(() => done(), done)
    },
  })
  try {
    await pump([
      source,
      counted,
      createWriteStream(path, { flags: 'wx', highWaterMark: SPOOL_WRITE_BUFFER }),
    ])
  } catch (e) {
    await removeFile(path)
    throw e
  }
  return { ...tempFileAt(path, size, originalName), head: head ?? Buffer.alloc(0) }
}

/** fs calls on the open spool file (their errors name no path): the temp folder failed. */
const WRITE_CALLS = new Set(['write', 'writev', 'close', 'fsync'])

/**
 * What a failed spool write is answered with, or undefined when the body failed, not the temp
 * folder (opening the spool file at `path`, or writing it).
 */
function writeFailure(e: unknown, path: string, tempRoot: string): UeError | undefined {
  if (isUeError(e)) return undefined
  if (diskFullCode(e)) return storageFull('spool', tempRoot, e)
  const { syscall, path: named } = (e ?? {}) as { syscall?: unknown; path?: unknown }
  const ours = syscall === 'open' ? named === path : WRITE_CALLS.has(String(syscall))
  if (!ours) return undefined
  return new UeError('UE_STORAGE_FAILED', { cause: e, context: { at: 'spool', folder: tempRoot } })
}

/** A fresh spool path next to `file` (same pid-named pattern, so a crash leaves nothing for good). */
export function siblingPath(file: TempFile): string {
  return newSpoolPath(dirname(file.path))
}

/** Describes bytes another writer (an image encoder) already put at `path` as a TempFile. */
export async function describeFile(path: string, originalName: string): Promise<TempFile> {
  const { size } = await stat(path)
  return tempFileAt(path, size, originalName)
}

/** A temp file whose size is known (its writer just wrote it), removed on `dispose`. */
export function tempFileAt(path: string, size: number, originalName: string): TempFile {
  return { path, size, originalName, dispose: () => removeFile(path) }
}

/** Removes one file; one already gone is fine. (`rm` would stat it first.) */
async function removeFile(path: string): Promise<void> {
  try {
    await unlink(path)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e
  }
}
