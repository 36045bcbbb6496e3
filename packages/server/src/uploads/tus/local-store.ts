import { createWriteStream } from 'node:fs'
import { join } from 'node:path'
import { type Readable, Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { FileStore } from '@tus/file-store'
import { ERRORS } from '@tus/server'
import { diskFullCode, storageFull } from '../../shared/errors.js'
import { UPLOAD_ID } from './keys.js'

/**
 * tus's file store, except for a write the disk refuses for lack of space: the store answers
 * every failed write with the same `FILE_WRITE_ERROR` and drops its cause, so a full disk would
 * look like any failure. The write itself is the store's (the file opened `r+` at the offset).
 */
export class LocalTusStore extends FileStore {
  override async write(readable: Readable, id: string, offset: number): Promise<number> {
    // Store ids here are ledger ids (see `storeIdOf`): a name in the folder, never a path.
    if (!UPLOAD_ID.test(id)) throw ERRORS.FILE_NOT_FOUND
    const sink = createWriteStream(join(this.directory, id), { flags: 'r+', start: offset })
    let received = 0
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        received += chunk.length
        done(null, chunk)
      },
    })
    try {
      await pipeline(readable, counted, sink)
    } catch (e) {
      if (diskFullCode(e)) throw storageFull('tus', this.directory, e)
      throw ERRORS.FILE_WRITE_ERROR
    }
    return offset + received
  }
}
