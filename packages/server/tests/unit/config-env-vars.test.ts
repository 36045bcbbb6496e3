import assert from 'node:assert/strict'
import { EDITOR_DEFAULTS } from '../../src/config/editor-defaults.js'
import { ENV_VARS } from '../../src/config/env-var-table.js'
import { envLayer, envVarsOf } from '../../src/config/env-vars.js'
import { test } from '../helpers/test.js'

const byName = (name: string) => {
  const v = ENV_VARS.find((e) => e.name === name)
  assert.ok(v, name)
  return v
}

test('each environment variable takes its kind from the schema of the key it sets', () => {
  const kinds = Object.fromEntries(
    [
      'HOST',
      'PORT',
      'UEDITOR_METRICS',
      'UEDITOR_IMAGE_MAX_SIZE',
      'UEDITOR_QUOTA_BYTES',
      'UEDITOR_CORS_ORIGINS',
      'UEDITOR_JSONP_ACTIONS',
      'UEDITOR_LOCALE',
      'UEDITOR_STORAGE',
      'UEDITOR_AUTH_JWKS_URL',
    ].map((name) => [name, byName(name).kind]),
  )
  assert.deepEqual(kinds, {
    HOST: 'string',
    PORT: 'number',
    UEDITOR_METRICS: 'bool',
    UEDITOR_IMAGE_MAX_SIZE: 'size',
    UEDITOR_QUOTA_BYTES: 'size',
    UEDITOR_CORS_ORIGINS: 'list',
    UEDITOR_JSONP_ACTIONS: 'list',
    UEDITOR_LOCALE: 'enum',
    UEDITOR_STORAGE: 'enum',
    UEDITOR_AUTH_JWKS_URL: 'string',
  })
  assert.equal(byName('UEDITOR_LOCALE').help, 'locale: zh-CN or en (default zh-CN)')
  // storage.driver is a literal in each member of the storage union.
  assert.equal(byName('UEDITOR_STORAGE').help, 'storage.driver: local or s3')
  assert.equal(byName('PORT').help, 'http.port, a number (default 8080)')
})

test('a new variable needs only its name and path: its kind, choices and default come from the schema', () => {
  const [redirects, position, body, emptied] = envVarsOf([
    ['UEDITOR_CATCHER_MAX_REDIRECTS', 'catcher.maxRedirects'],
    ['UEDITOR_WATERMARK_POSITION', 'images.watermark.position'],
    ['UEDITOR_MATERIALS_MAX_BODY', 'materials.maxBodyBytes'],
    ['UEDITOR_JWT_ALGORITHMS', 'auth.jwt.algorithms', { emptyClears: true }],
  ])
  assert.deepEqual(
    [redirects, position, body, emptied].map((v) => v && [v.name, v.paths, v.kind]),
    [
      ['UEDITOR_CATCHER_MAX_REDIRECTS', [['catcher', 'maxRedirects']], 'number'],
      ['UEDITOR_WATERMARK_POSITION', [['images', 'watermark', 'position']], 'enum'],
      ['UEDITOR_MATERIALS_MAX_BODY', [['materials', 'maxBodyBytes']], 'size'],
      ['UEDITOR_JWT_ALGORITHMS', [['auth', 'jwt', 'algorithms']], 'list'],
    ],
  )
  assert.equal(redirects?.help, 'catcher.maxRedirects, a number (default 3)')
  assert.match(
    position?.help ?? '',
    /^images\.watermark\.position: north, .*, northwest or center \(default southeast\)$/,
  )
  assert.equal(body?.help, 'materials.maxBodyBytes: bytes, or a size such as 2MB (default 262144)')
  assert.equal(emptied?.emptyClears, true)
  assert.equal(emptied?.help, 'auth.jwt.algorithms, comma-separated; set empty for none')
})

test('a * in a path sets every key it matches, as UEDITOR_URL_PREFIX does for the nine URL prefixes', () => {
  const prefixKeys = Object.keys(EDITOR_DEFAULTS).filter((k) => k.endsWith('UrlPrefix'))
  assert.equal(prefixKeys.length, 9)
  assert.deepEqual(
    byName('UEDITOR_URL_PREFIX')
      .paths.map((p) => p.join('.'))
      .sort(),
    prefixKeys.map((k) => `editor.${k}`).sort(),
  )
})

test('a line whose path names no key, or keys of different kinds, is refused when the table is read', () => {
  assert.throws(
    () => envVarsOf([['UEDITOR_NOPE', 'http.nope']]),
    /UEDITOR_NOPE: its path names no config key/,
  )
  assert.throws(
    () => envVarsOf([['UEDITOR_EDITOR_ALL', 'editor.image*']]),
    /UEDITOR_EDITOR_ALL: its keys are of different kinds/,
  )
  assert.throws(() => envVarsOf([['UEDITOR_WATERMARK', 'images.watermark']]), /of type object/)
})

test('the environment layer reads each value by its kind and passes what does not read on as written', () => {
  assert.deepEqual(
    envLayer({
      PORT: '9000',
      UEDITOR_IMAGES_QUALITY: 'high',
      UEDITOR_METRICS: '0',
      UEDITOR_MATERIALS_SEED: 'TRUE',
      UEDITOR_IMAGES_ENABLED: 'maybe',
      UEDITOR_JSONP_ACTIONS: ' config , catch,',
      UEDITOR_IMAGE_MAX_SIZE: '2MB',
      UEDITOR_LOCALE: 'en',
      UEDITOR_CATCHER_LOCAL_DOMAIN: '',
      UEDITOR_CORS_ORIGINS: '',
      UEDITOR_DATABASE_URL: 'postgres://db/ue',
    }),
    {
      http: { port: 9000, jsonpActions: ['config', 'catch'] },
      images: { quality: 'high', enabled: 'maybe' },
      metrics: { enabled: false },
      materials: { seed: true },
      editor: { imageMaxSize: '2MB', catcherLocalDomain: [] },
      locale: 'en',
      index: { url: 'postgres://db/ue', driver: 'postgres' },
    },
  )
})
