import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A new folder under the system's temp folder, named from `prefix`, removed when the test ends. */
export async function tempDir(
  t: { after(fn: () => Promise<void>): void },
  prefix: string,
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  t.after(() => rm(dir, { recursive: true, force: true }))
  return dir
}
