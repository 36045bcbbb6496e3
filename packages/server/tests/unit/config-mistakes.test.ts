import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseDuration } from '../../src/config/duration.js'
import { unknownEditorKeys } from '../../src/config/editor-keys.js'
import { loadConfig, unknownVariables } from '../../src/config/load.js'
import { isUeError } from '../../src/shared/errors.js'
import type { Logger } from '../../src/shared/types.js'
import { blob, png } from '../helpers/fixtures.js'
import { startTestServer } from '../helpers/start-server.js'
import { test } from '../helpers/test.js'

/** The problem lines of a UE_CONFIG_INVALID thrown by loadConfig. */
function problems(load: () => unknown): string[] {
  try {
    load()
  } catch (e) {
    assert.ok(isUeError(e) && e.code === 'UE_CONFIG_INVALID', String(e))
    return (e.detail ?? '').split('\n  - ').slice(1)
  }
  assert.fail('the config was accepted')
}

function recordingLogger() {
  const records: { level: string; o: Record<string, unknown>; msg?: string }[] = []
  const at =
    (level: string) =>
    (o: object, msg?: string): void => {
      records.push({ level, o: o as Record<string, unknown>, ...(msg ? { msg } : {}) })
    }
  const logger: Logger = {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
  }
  return { logger, records }
}

test('a mistyped editor key is named with the nearest known key', () => {
  assert.deepEqual(unknownEditorKeys({ imageMaxSzie: 5, imageMaxSize: 9 }), [
    {
      key: 'imageMaxSzie',
      suggestion: 'imageMaxSize',
      message:
        'unknown editor key `imageMaxSzie` (did you mean `imageMaxSize`?): it is passed to the browser as is; list it in `editorExtraKeys` if it is deliberate',
    },
  ])
  assert.equal(unknownEditorKeys({ imageactionname: 'x' })[0]?.suggestion, 'imageActionName')
  assert.equal(unknownEditorKeys({ videoAllowFile: [] })[0]?.suggestion, 'videoAllowFiles')
})

test('an unknown editor key far from every known key gets no suggestion', () => {
  assert.deepEqual(unknownEditorKeys({ companyWidgetTheme: 'dark' }), [
    {
      key: 'companyWidgetTheme',
      message:
        'unknown editor key `companyWidgetTheme`: it is passed to the browser as is; list it in `editorExtraKeys` if it is deliberate',
    },
  ])
})

test('known UEditor keys and keys listed in editorExtraKeys raise no warning', () => {
  const editor = { imageMaxSize: 1, toolbars: [], imageConfig: {}, formulaConfig: {}, myKey: 1 }
  assert.deepEqual(unknownEditorKeys(editor, ['myKey']), [])
})

test('the server warns at start about each unknown editor key, and not about deliberate extras', async (t) => {
  const { logger, records } = recordingLogger()
  await startTestServer(
    t,
    { editor: { imageMaxSzie: 5, myWidget: true }, editorExtraKeys: ['myWidget'] },
    { logger },
  )
  const warnings = records.filter((r) => r.level === 'warn')
  assert.deepEqual(warnings, [
    {
      level: 'warn',
      o: { key: 'imageMaxSzie', suggestion: 'imageMaxSize' },
      msg: 'unknown editor key `imageMaxSzie` (did you mean `imageMaxSize`?): it is passed to the browser as is; list it in `editorExtraKeys` if it is deliberate',
    },
  ])
})

test('UEDITOR_EDITOR_EXTRA_KEYS lists deliberate extras', () => {
  const config = loadConfig({ env: { UEDITOR_EDITOR_EXTRA_KEYS: 'a, b' } })
  assert.deepEqual(config.editorExtraKeys, ['a', 'b'])
})

test('a bad environment value is named with the variable and the value as written', () => {
  assert.deepEqual(
    problems(() => loadConfig({ env: { UEDITOR_IMAGE_MAX_SIZE: '2 megs', PORT: 'eighty' } })),
    [
      'editor.imageMaxSize (from UEDITOR_IMAGE_MAX_SIZE=2 megs): must be a size: a number of bytes (2097152) or a number and a unit: 512KB, 2MB, 1.5GiB (B, KB, MB, GB, TB or KiB, MiB, GiB, TiB; KB and KiB both count 1024 bytes)',
      'http.port (from PORT=eighty): Invalid input: expected number, received string',
    ],
  )
})

test('sizes are read as bytes or with a unit, KB and KiB both counting 1024', () => {
  const sizes = (value: unknown) =>
    loadConfig({ env: {}, overrides: { editor: { imageMaxSize: value } } }).editor.imageMaxSize
  assert.equal(sizes(2_097_152), 2_097_152)
  assert.equal(sizes('2097152'), 2_097_152)
  assert.equal(sizes('2MB'), 2_097_152)
  assert.equal(sizes('2 mib'), 2_097_152)
  assert.equal(sizes('512KB'), 524_288)
  assert.equal(sizes('512KiB'), 524_288)
  assert.equal(sizes('1.5GiB'), 1_610_612_736)
  assert.equal(sizes('0.5k'), 512)
  assert.equal(sizes('10B'), 10)
  for (const bad of ['2 megs', '2MBs', 'MB', '-2MB', '1e6', '', true])
    assert.throws(
      () => sizes(bad),
      /editor\.imageMaxSize \(from code: .*\): must be a size/,
      `${JSON.stringify(bad)} was accepted`,
    )
})

test('a bad file value is named with the file and the value', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ueditor-cfg-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  await writeFile(
    join(dir, 'site.json'),
    JSON.stringify({
      editor: { imageMaxSize: -1, fileAllowFiles: ['.html'] },
      locale: 'fr',
      typo: 1,
    }),
  )
  assert.deepEqual(
    problems(() => loadConfig({ configFile: 'site.json', cwd: dir, env: {} })),
    [
      'editor.fileAllowFiles (from site.json): ".html" can carry script; set security.allowActiveContent to allow it',
      'locale (from site.json: "fr"): Invalid option: expected one of "zh-CN"|"en"',
      'editor.imageMaxSize (from site.json: -1): Too small: expected number to be >0',
      'typo (from site.json): unknown key',
    ],
  )
})

test('a bad value passed in code is named as coming from code, and a missing one as not set', () => {
  assert.deepEqual(
    problems(() =>
      loadConfig({ env: {}, overrides: { http: { port: 70000 }, storage: { driver: 's3' } } }),
    ),
    [
      'storage.bucket (not set): Invalid input: expected string, received undefined',
      'http.port (from code: 70000): Too big: expected number to be <=65535',
    ],
  )
})

test('a secret in a bad value is named but never shown', () => {
  const lines = problems(() =>
    loadConfig({
      env: {
        UEDITOR_DATABASE_URL: 'mysql://user:hunter2@db/x',
        UEDITOR_MATERIALS_TOKENS: 'short-secret',
      },
    }),
  )
  assert.deepEqual(lines, [
    'index.url (from UEDITOR_DATABASE_URL=<hidden>): must be a postgres:// or postgresql:// URL',
    'materials.tokens.0 (from UEDITOR_MATERIALS_TOKENS=<hidden>): Too small: expected string to have >=16 characters',
  ])
  assert.doesNotMatch(lines.join('\n'), /hunter2|short-secret/)
})

test('a refused upload logs at debug level the action, the field it reads and the limit it hit', async (t) => {
  const { logger, records } = recordingLogger()
  const srv = await startTestServer(t, { editor: { imageMaxSize: 1000 } }, { logger })
  const form = new FormData()
  form.append('upfile', blob(png(200, 200, { noise: true }), 'image/png'), 'big.png')
  const answer = await (
    await fetch(srv.action('image'), {
      method: 'POST',
      body: form,
      headers: { 'X-Request-Id': 'req-big' },
    })
  ).json()
  assert.equal(answer.code, 'UE_FILE_TOO_LARGE')
  const refusals = records.filter((r) => r.msg === 'editor request refused')
  assert.deepEqual(refusals, [
    {
      level: 'debug',
      o: {
        reqId: 'req-big',
        code: 'UE_FILE_TOO_LARGE',
        action: 'image',
        kind: 'upload',
        field: 'upfile',
        limit: { maxSize: 1000 },
      },
      msg: 'editor request refused',
    },
  ])
})

test('a refused type logs the allowed extensions, and a missing file the field names read', async (t) => {
  const { logger, records } = recordingLogger()
  const srv = await startTestServer(t, { editor: { imageAllowFiles: ['.png'] } }, { logger })
  const wrong = new FormData()
  wrong.append('upfile', blob(Buffer.from('GIF89a'), 'image/gif'), 'a.gif')
  const headers = (id: string) => ({ 'X-Request-Id': id })
  await fetch(srv.action('image'), { method: 'POST', body: wrong, headers: headers('req-gif') })
  const empty = new FormData()
  empty.append('other', 'x')
  await fetch(srv.action('image'), { method: 'POST', body: empty, headers: headers('req-none') })
  const refusals = records.filter((r) => r.msg === 'editor request refused').map((r) => r.o)
  assert.deepEqual(refusals, [
    {
      reqId: 'req-gif',
      code: 'UE_TYPE_NOT_ALLOWED',
      action: 'image',
      kind: 'upload',
      field: 'upfile',
      limit: { allowFiles: ['.png'] },
    },
    {
      reqId: 'req-none',
      code: 'UE_FILE_MISSING',
      action: 'image',
      kind: 'upload',
      field: 'upfile',
      limit: { fieldNames: ['upfile'] },
    },
  ])
})

test('an unknown UEDITOR_ variable is refused when it looks like one of ours or is an auth name, and only reported otherwise', () => {
  const found = unknownVariables({
    UEDITOR_AUTH_TOKEN: 'x',
    UEDITOR_IMAGE_MAXSIZE: '1',
    UEDITOR_PORT: '80',
    UEDITOR_JWT_SECRET: 'x',
    UEDITOR_AUTH_SESSION_COOKIE: 'x',
    UEDITOR_FRONTEND_BUILD_ID: '42',
    UEDITOR_AUTH_TOKENS: 'alice:alice-token-0123456789abcdef',
    UEDITOR_CONFIG: 'ueditor.json',
    NOT_OURS: '1',
  })
  assert.deepEqual(
    found.map((u) => [u.name, u.suggestion ?? null, u.refused]),
    [
      ['UEDITOR_AUTH_SESSION_COOKIE', null, true],
      ['UEDITOR_AUTH_TOKEN', 'UEDITOR_AUTH_TOKENS', true],
      ['UEDITOR_FRONTEND_BUILD_ID', null, false],
      ['UEDITOR_IMAGE_MAXSIZE', 'UEDITOR_IMAGE_MAX_SIZE', true],
      ['UEDITOR_JWT_SECRET', 'UEDITOR_AUTH_JWT_SECRET', true],
      ['UEDITOR_PORT', 'PORT', true],
    ],
  )
  assert.throws(
    () => loadConfig({ env: { UEDITOR_PORT: '80' } }),
    /unknown variable UEDITOR_PORT \(did you mean PORT\?\)/,
  )
  assert.doesNotThrow(() => loadConfig({ env: { UEDITOR_FRONTEND_BUILD_ID: '42' } }))
})

test('documents durations read 7d, 12h, 30m and seconds, and a wrong one is refused naming the forms', () => {
  const config = loadConfig({
    env: { UEDITOR_DOCUMENTS_ORPHAN_GRACE: '12h', UEDITOR_DOCUMENTS_SWEEP_INTERVAL: '3600' },
  })
  assert.equal(config.documents.orphanGrace, '12h')
  assert.equal(parseDuration(config.documents.orphanGrace), 43_200_000)
  assert.equal(parseDuration(config.documents.sweepInterval as string), 3_600_000)
  assert.equal(parseDuration('7d'), 604_800_000)
  assert.equal(parseDuration('30m'), 1_800_000)
  assert.throws(
    () => loadConfig({ env: { UEDITOR_DOCUMENTS_ORPHAN_GRACE: '1w' } }),
    (e) =>
      isUeError(e) &&
      /documents\.orphanGrace \(from UEDITOR_DOCUMENTS_ORPHAN_GRACE=1w\): must be a duration/.test(
        e.message,
      ),
  )
  assert.equal(loadConfig({ env: {} }).documents.enabled, false, 'off by default')
})
