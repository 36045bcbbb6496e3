import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { Busboy, type BusboyFileStream } from '@fastify/busboy'
import { UeError } from '../shared/errors.js'
import { assertIdentityEncoding, readBody } from '../shared/request-body.js'
import type { Spool, TempFile } from './temp-file.js'

export interface SingleFileOptions {
  /** Accepted field names, in preference order (the configured one, then aliases). */
  fieldNames: readonly string[]
  maxSize: number
  maxFields: number
  idleMs: number
}

/**
 * Streams a multipart body and spools exactly one file part from an accepted field. Bytes
 * past `maxSize` are never written; a second file part refuses the whole request.
 */
export async function readSingleFile(
  request: Request,
  spool: Spool,
  o: SingleFileOptions,
): Promise<TempFile> {
  assertIdentityEncoding(request)
  const contentType = request.headers.get('content-type') ?? ''
  if (!/^multipart\/form-data;.*boundary=/i.test(contentType))
    throw new UeError('UE_BODY_INVALID', { detail: 'expected multipart/form-data with a boundary' })

  let parser: ReturnType<typeof Busboy>
  try {
    parser = Busboy({
      headers: { 'content-type': contentType },
      defCharset: 'utf8',
      limits: {
        files: 1,
        fileSize: o.maxSize,
        fields: o.maxFields,
        parts: o.maxFields + 2,
        fieldSize: 64 * 1024,
        headerPairs: 64,
      },
    })
  } catch (cause) {
    throw new UeError('UE_BODY_INVALID', { cause })
  }

  let failure: UeError | undefined
  let spooling: Promise<TempFile> | undefined
  let fileStream: BusboyFileStream | undefined
  const fail = (e: UeError) => {
    failure ??= e
  }

  parser.on('file', (field: string, stream: BusboyFileStream, filename: string) => {
    if (spooling || !o.fieldNames.includes(field)) {
      if (spooling) fail(new UeError('UE_TOO_MANY_FILES'))
      stream.resume()
      return
    }
    // busboy truncates at limits.fileSize and keeps parsing, so the spool never sees more.
    stream.on('limit', () => fail(new UeError('UE_FILE_TOO_LARGE')))
    fileStream = stream
    spooling = spool.write(stream, o.maxSize, filename ?? '')
    spooling.catch((e: unknown) => {
      fail(asUeError(e))
      parser.destroy(failure)
    })
  })
  parser.on('filesLimit', () => fail(new UeError('UE_TOO_MANY_FILES')))
  parser.on('partsLimit', () => fail(new UeError('UE_BODY_INVALID', { detail: 'too many parts' })))
  parser.on('fieldsLimit', () =>
    fail(new UeError('UE_BODY_INVALID', { detail: 'too many fields' })),
  )

  // A body larger than this is no longer drained for a polite answer; the socket is closed.
  const drainCap = o.maxSize * 2 + 1024 * 1024
  try {
    const body = readBody(request, {
      maxBytes: drainCap,
      idleMs: o.idleMs,
      tooLarge: new UeError('UE_FILE_TOO_LARGE'),
    })
    await pipeline(Readable.from(body), parser)
  } catch (e) {
    fail(asUeError(e))
    // A body cut off mid-file never ends the part stream by itself.
    fileStream?.destroy(failure)
  }

  const file = await spooling?.catch(() => undefined)
  if (failure || !file) {
    await file?.dispose()
    throw failure ?? new UeError('UE_FILE_MISSING')
  }
  if (file.size === 0) {
    await file.dispose()
    throw new UeError('UE_FILE_EMPTY')
  }
  return file
}

function asUeError(e: unknown): UeError {
  return e instanceof UeError ? e : new UeError('UE_BODY_INVALID', { cause: e })
}
