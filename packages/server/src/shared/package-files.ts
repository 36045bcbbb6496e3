import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

let root: string | undefined

/**
 * The path of a file this package carries (`package.json`, `docs/`, `dist/src/…`), found from
 * wherever the running code lies: the compiled modules (`dist/src/<room>/`) or the server
 * binary's bundle (`dist/bin/`). The nearest folder above with a `package.json` is the
 * package's root.
 */
export function packageFile(...segments: string[]): string {
  if (root === undefined) {
    let dir = dirname(fileURLToPath(import.meta.url))
    while (!existsSync(join(dir, 'package.json'))) {
      const up = dirname(dir)
      if (up === dir) throw new Error('ueditor-server: no package.json above its own modules')
      dir = up
    }
    root = dir
  }
  return join(root, ...segments)
}
