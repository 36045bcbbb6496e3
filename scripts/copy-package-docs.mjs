#!/usr/bin/env node
// Part of `npm run build`: each package carries the project's docs and CHANGELOG, so the links
// of its README and of `ueditor-server --help` resolve inside an installed package (there is no
// repository to link to from an offline install). The copies are build output, ignored by git.
import { cpSync, mkdirSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../', import.meta.url))
for (const pkg of ['packages/server', 'packages/loaders']) {
  const target = join(root, pkg, 'docs')
  rmSync(target, { recursive: true, force: true })
  mkdirSync(target)
  for (const name of readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')))
    cpSync(join(root, 'docs', name), join(target, name))
  cpSync(join(root, 'CHANGELOG.md'), join(root, pkg, 'CHANGELOG.md'))
}
