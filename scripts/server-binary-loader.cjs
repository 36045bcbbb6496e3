#!/usr/bin/env node
'use strict'
// The `ueditor-server` binary (copied to packages/server/dist/bin/ueditor-server.cjs by
// scripts/bundle-server-binary.mjs). It runs the server's bundle (server.cjs, beside this file)
// with the V8 code cache the build saved of a start (server.cjs.v8-cache), so that a start
// spends no time compiling what every start runs. Node 20 has no compile cache of its own for
// this; a cache V8 does not accept (another Node version, other V8 flags) is ignored, and the
// bundle is compiled as it would be without one.
const { readFileSync } = require('node:fs')
const { createRequire } = require('node:module')
const { join } = require('node:path')
const { Script } = require('node:vm')

const BUNDLE = join(__dirname, 'server.cjs')
const CODE_CACHE = `${BUNDLE}.v8-cache`

/** The bundle compiled, with the saved code cache when there is one. */
function compileBundle() {
  let cachedData
  try {
    cachedData = readFileSync(CODE_CACHE)
  } catch {
    // No cache: the build is making it, or it was removed. The start is only slower.
  }
  // The bundle's `import()`s call `__ueImport`: a script compiled from a code cache has no
  // dynamic import of its own on Node 20, so it borrows this module's.
  const wrapped = `(function (exports, require, module, __filename, __dirname, __ueImport) {\n${readFileSync(BUNDLE, 'utf8')}\n})`
  return new Script(wrapped, { filename: BUNDLE, lineOffset: -1, cachedData })
}

/** Runs a compiled bundle: the server's command line, as `node server.cjs` would. */
function runBundle(script) {
  const bundleModule = { exports: {} }
  script
    .runInThisContext()
    .call(
      bundleModule.exports,
      bundleModule.exports,
      createRequire(BUNDLE),
      bundleModule,
      BUNDLE,
      __dirname,
      (specifier) => import(specifier),
    )
}

if (require.main === module) runBundle(compileBundle())
else module.exports = { compileBundle, runBundle, CODE_CACHE }
