import type { Busboy, BusboyFileStream } from '@fastify/busboy'
import { UeError } from '../shared/errors.js'
import {
  assertIdentityEncoding,
  type BodyTimeouts,
  BodyWatch,
  pipeBody,
} from '../shared/request-body.js'
import type { Spool, SpooledFile } from './temp-file.js'

export interface SingleFileOptions {
  /** Accepted field names, in preference order (the configured one, then aliases). */
  fieldNames: readonly string[]
  maxSize: number
  maxFields: number
  timeouts: BodyTimeouts
  /** Checks the file's first bytes as they arrive (given its client-supplied name); a throw refuses. */
  inspect?: (head: Buffer, filename: string) => Promise<unknown>
}

/**
 * Streams a multipart body and spools exactly one file part from an accepted field. Bytes
 * past `maxSize` are never written; a second file part refuses the whole request. Every way out
 * (answer, refusal, malformed body, client gone, deadline) ends the parser and the spool write,
 * so nothing waits for ever and no partial file is left behind.
 */
export async function readSingleFile(
  request: Request,
  spool: Spool,
  o: SingleFileOptions,
): Promise<SpooledFile> {
  assertIdentityEncoding(request)
  const contentType = request.headers.get('content-type') ?? ''
  if (!/^multipart\/form-data;/i.test(contentType) || !boundaryOf(contentType))
    throw new UeError('UE_BODY_INVALID', { detail: 'expected multipart/form-data with a boundary' })

  let parser: ReturnType<typeof Busboy>
  // busboy loads with the first form read, not at start.
  const { Busboy: createParser } = await import('@fastify/busboy')
  try {
    parser = createParser({
      headers: { 'content-type': contentType },
      defCharset: 'utf8',
      limits: {
        // Extra file parts are drained and refused below: busboy's own `files` limit can stall
        // the parse for good when it skips a part while the first file is still spooling.
        files: o.maxFields + 1,
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

  const watch = new BodyWatch(o.timeouts, request.signal)
  let failure: UeError | undefined
  let spooling: Promise<SpooledFile> | undefined
  let fileStream: BusboyFileStream | undefined
  const fail = (e: UeError) => {
    failure ??= e
  }
  // Past the parse, the watch still guards the spool write of the last bytes.
  watch.signal.addEventListener('abort', () => {
    fail(asUeError(watch.signal.reason))
    fileStream?.destroy(failure)
  })

  parser.on('file', (field: string, stream: BusboyFileStream, filename: string) => {
    if (spooling || !o.fieldNames.includes(field)) {
      if (spooling) fail(new UeError('UE_TOO_MANY_FILES'))
      stream.resume()
      return
    }
    // busboy truncates at limits.fileSize and keeps parsing, so the spool never sees more.
    stream.on('limit', () => fail(new UeError('UE_FILE_TOO_LARGE')))
    fileStream = stream
    const name = filename ?? ''
    const { inspect } = o
    spooling = spool.write(stream, o.maxSize, name, inspect && ((head) => inspect(head, name)))
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
    await pipeBody(request, parser, {
      maxBytes: drainCap,
      watch,
      tooLarge: 'UE_FILE_TOO_LARGE',
    })
  } catch (e) {
    fail(watch.signal.aborted ? asUeError(watch.signal.reason) : asUeError(e))
    // A body cut off mid-file never ends the part stream by itself.
    fileStream?.destroy(failure)
  }

  const file = await spooling?.catch(() => undefined)
  watch.stop()
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

/**
 * The `boundary` parameter's value, or undefined when it is absent or empty. busboy takes an
 * empty one and declares the parse finished before the body has ended; what the upload then
 * answers depended on the order of events, so such a body is refused before it is read.
 */
function boundaryOf(contentType: string): string | undefined {
  const match = /;\s*boundary=(?:"([^"]*)"|([^;\s]*))/i.exec(contentType)
  return (match?.[1] ?? match?.[2]) || undefined
}
