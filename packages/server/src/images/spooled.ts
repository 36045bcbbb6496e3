import { createHash, randomUUID } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { rm, stat } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { TempFile } from '../ingest/temp-file.js'

/** A fresh path next to `file`, so derived bytes live (and are removed) with the request spool. */
export function siblingPath(file: TempFile): string {
  return join(dirname(file.path), `${randomUUID()}.img`)
}

/** Describes bytes already written at `path` as a TempFile (size and sha256 of what is there). */
export async function describeFile(path: string, originalName: string): Promise<TempFile> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer)
  const { size } = await stat(path)
  return {
    path,
    size,
    sha256: hash.digest('hex'),
    originalName,
    dispose: () => rm(path, { force: true }),
  }
}
