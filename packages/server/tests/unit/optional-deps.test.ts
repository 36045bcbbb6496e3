import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { ENV_VARS } from '../../src/config/env-var-table.js'
import { loadConfig } from '../../src/config/load.js'
import { isUeError } from '../../src/shared/errors.js'
import {
  dependencyMissing,
  importOptional,
  installed,
  missingPackages,
  neededPackages,
} from '../../src/shared/optional-deps.js'
import { envHelpLines } from '../../src/standalone/env-help.js'
import { test } from '../helpers/test.js'

const configOf = (overrides: object) => loadConfig({ env: {}, overrides })
const names = (overrides: object) => neededPackages(configOf(overrides)).map((n) => n.package)

test('each optional package is needed only by the setting that turns its feature on', () => {
  // The formula renderer is the one optional feature on by default.
  assert.deepEqual(names({}), ['@mathjax/src', '@mathjax/mathjax-newcm-font'])
  const quiet = { formula: { enabled: false } }
  assert.deepEqual(names(quiet), [])
  const s3 = { storage: { driver: 's3', bucket: 'uploads', region: 'us-east-1' } }
  assert.deepEqual(names({ ...quiet, ...s3 }), [
    '@aws-sdk/client-s3',
    '@tus/s3-store',
    '@aws-sdk/s3-presigned-post',
    '@aws-sdk/s3-request-presigner',
  ])
  assert.deepEqual(
    names({ ...quiet, ...s3, tus: { enabled: false }, direct: { enabled: false } }),
    ['@aws-sdk/client-s3'],
  )
  assert.deepEqual(
    names({ ...quiet, index: { driver: 'postgres', url: 'postgres://u@127.0.0.1/db' } }),
    ['pg'],
  )
  const ai = { baseUrl: 'https://api.example.com/v1', apiKey: 'sk-0123456789', model: 'm' }
  assert.deepEqual(names({ ...quiet, ai }), ['openai'])
  assert.deepEqual(names({ ...quiet, logFormat: 'pretty' }), ['pino-pretty'])
  assert.deepEqual(names({ ...quiet, logFormat: 'auto' }), [])
})

test('a package is found without being loaded, and one that is not installed is missing', () => {
  for (const name of ['@mathjax/src', '@mathjax/mathjax-newcm-font', 'pg', 'openai', 'pino-pretty'])
    assert.equal(installed(name), true, name)
  assert.equal(installed('ueditor-no-such-package'), false)
  assert.deepEqual(missingPackages(configOf({})), [])
})

test('an import of a package that is not installed becomes UE_DEPENDENCY_MISSING naming it; other failures pass through', async () => {
  const missing = await importOptional(
    'ueditor-no-such-package',
    'storage.driver "s3"',
    () => import('ueditor-no-such-package' as string),
  ).catch((e: unknown) => e)
  assert.ok(isUeError(missing) && missing.code === 'UE_DEPENDENCY_MISSING', String(missing))
  assert.equal(
    missing.detail,
    '\n  - storage.driver "s3" needs the npm package ueditor-no-such-package' +
      '\n  Install it (npm install ueditor-no-such-package) or turn the setting off.',
  )
  const broken = new Error('its own bug')
  const passed = await importOptional('openai', 'ai', () => Promise.reject(broken)).catch((e) => e)
  assert.equal(passed, broken)
  const both = dependencyMissing([
    { package: '@mathjax/src', setting: 'formula.enabled' },
    { package: '@mathjax/mathjax-newcm-font', setting: 'formula.enabled' },
  ])
  assert.match(both.detail ?? '', /npm install @mathjax\/src @mathjax\/mathjax-newcm-font\)/)
})

test('the --help table the build saved is the one the config schema gives', async () => {
  const saved = new URL('../../src/standalone/env-help.json', import.meta.url)
  const fromSchema = ENV_VARS.map((v) => [v.name, v.help])
  assert.deepEqual(
    (JSON.parse(readFileSync(fileURLToPath(saved), 'utf8')) as { lines: unknown }).lines,
    fromSchema,
    'npm run build saves it (scripts/save-env-help.mjs)',
  )
  assert.deepEqual(await envHelpLines(), fromSchema)
})
