#!/usr/bin/env node
// `npm run release:pack [-- <folder>]`: the two release tarballs (loaders, then server), packed
// from the built packages into `release/` (or the folder given), which is created first:
// `npm pack --pack-destination` fails on a folder that does not exist. `release/` is ignored
// by git. Build first (`npm run build`).
import { execFileSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../', import.meta.url))
const destination = resolve(process.argv[2] ?? resolve(root, 'release'))
mkdirSync(destination, { recursive: true })
execFileSync(
  'npm',
  [
    'pack',
    '-w',
    '@ueditor-backend/loaders',
    '-w',
    '@ueditor-backend/server',
    '--pack-destination',
    destination,
  ],
  { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] },
)
