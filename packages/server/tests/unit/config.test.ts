import assert from 'node:assert/strict'
import { loadConfig } from '../../src/config/load.js'
import { buildActionTable } from '../../src/editor/action-table.js'
import { UeError } from '../../src/shared/errors.js'
import { describe, test } from '../helpers/test.js'

function problems(fn: () => unknown): string {
  try {
    fn()
  } catch (e) {
    assert.ok(e instanceof UeError)
    assert.equal(e.code, 'UE_CONFIG_INVALID')
    return e.detail ?? ''
  }
  assert.fail('expected UE_CONFIG_INVALID')
}

describe('configuration loading', () => {
  test('embedded defaults put the index and uploads under ./data on 127.0.0.1:8080', () => {
    const cfg = loadConfig({ env: {}, cwd: '/srv/app' })
    assert.equal(cfg.http.host, '127.0.0.1')
    assert.equal(cfg.http.port, 8080)
    assert.deepEqual(cfg.storage, { driver: 'local', root: '/srv/app/data/uploads' })
    assert.deepEqual(cfg.index, { driver: 'sqlite', file: '/srv/app/data/ueditor.db' })
    assert.equal(cfg.publicUrl, '/uploads/')
    assert.equal(cfg.routes.editor, '/ueditor')
  })

  test('environment variables override the file and feed every mapped key', () => {
    const cfg = loadConfig({
      cwd: '/srv',
      env: {
        PORT: '9000',
        HOST: '0.0.0.0',
        UEDITOR_DATA_DIR: '/var/lib/ue',
        UEDITOR_CORS_ORIGINS: 'https://a.example, https://b.example',
        UEDITOR_IMAGE_MAX_SIZE: '1048576',
        UEDITOR_URL_PREFIX: 'https://cdn.example',
        UEDITOR_IMAGE_ALLOW_FILES: '.PNG,.jpg',
        UEDITOR_LOCALE: 'en',
        UEDITOR_DRAIN_MAX_BYTES: '1048576',
        UEDITOR_DRAIN_TIMEOUT_MS: '2500',
      },
    })
    assert.equal(cfg.http.drainMaxBytes, 1_048_576)
    assert.equal(cfg.http.drainTimeoutMs, 2_500)
    assert.equal(cfg.http.port, 9000)
    assert.equal(cfg.http.host, '0.0.0.0')
    assert.equal(cfg.dataDir, '/var/lib/ue')
    assert.deepEqual(cfg.http.corsOrigins, ['https://a.example', 'https://b.example'])
    assert.equal(cfg.editor.imageMaxSize, 1048576)
    assert.equal(cfg.editor.imageUrlPrefix, 'https://cdn.example')
    assert.equal(cfg.editor.fileManagerUrlPrefix, 'https://cdn.example')
    assert.deepEqual(cfg.editor.imageAllowFiles, ['.png', '.jpg'])
    assert.equal(cfg.locale, 'en')
  })

  test('editor keys in the JSON config are taken verbatim and unknown UEditor options pass through', () => {
    const cfg = loadConfig({
      env: {},
      overrides: {
        editor: { imageActionName: 'uploadimage', imageConfig: { disableOnline: true } },
      },
    })
    assert.equal(cfg.editor.imageActionName, 'uploadimage')
    assert.deepEqual(cfg.editor.imageConfig, { disableOnline: true })
  })

  test('every problem is listed at once', () => {
    const detail = problems(() =>
      loadConfig({
        env: { PORT: 'x' },
        overrides: {
          editor: { imageMaxSize: 0, videoAllowFiles: ['mp4'], fileAllowFiles: ['.html'] },
          nonsense: true,
        },
      }),
    )
    for (const fragment of [
      'http.port (from PORT=x)',
      'editor.imageMaxSize',
      'editor.videoAllowFiles',
      '.html',
      'nonsense',
    ])
      assert.ok(detail.includes(fragment), `${fragment} missing in ${detail}`)
  })

  test('path formats that use the client name, escape the root or are guessable are refused', () => {
    for (const imagePathFormat of [
      '{filename}{rand:6}',
      '../{rand:24}',
      '/abs/{rand:24}',
      'x/{time}{rand:6}',
      '{bogus}{rand:24}',
    ])
      assert.match(
        problems(() => loadConfig({ env: {}, overrides: { editor: { imagePathFormat } } })),
        /imagePathFormat/,
      )
  })

  test('an action named like a UEditor option is refused', () => {
    assert.match(
      problems(() => loadConfig({ env: {}, overrides: { editor: { fileActionName: 'lang' } } })),
      /option name/,
    )
  })

  test('active content in an allow-list needs the explicit opt-in', () => {
    const cfg = loadConfig({
      env: {},
      overrides: { editor: { fileAllowFiles: ['.svg'] }, security: { allowActiveContent: true } },
    })
    assert.deepEqual(cfg.editor.fileAllowFiles, ['.svg'])
  })

  test('a config file that is not JSON is reported with its path', () => {
    assert.match(
      problems(() => loadConfig({ env: {}, configFile: '/nonexistent/ue.json' })),
      /ue\.json/,
    )
  })

  test('prototype keys in the config never pollute objects', () => {
    loadConfig({
      env: {},
      overrides: JSON.parse('{"__proto__":{"polluted":1},"editor":{"__proto__":{"polluted":1}}}'),
    })
    assert.equal(({} as Record<string, unknown>).polluted, undefined)
  })
})

describe('the action table', () => {
  test('snapscreen may share the image action; other clashes are refused', () => {
    const shared = loadConfig({ env: {}, overrides: { editor: { snapscreenActionName: 'image' } } })
    const table = buildActionTable(shared.editor)
    assert.equal(table.get('image')?.kind, 'upload')
    const clash = loadConfig({ env: {}, overrides: { editor: { videoActionName: 'file' } } })
    assert.throws(() => buildActionTable(clash.editor), /UE_CONFIG_INVALID/)
  })

  test('an action may not be named config', () => {
    const cfg = loadConfig({ env: {}, overrides: { editor: { fileActionName: 'config' } } })
    assert.throws(() => buildActionTable(cfg.editor), /UE_CONFIG_INVALID/)
  })
})

describe('driver defaults', () => {
  test('a storage root or SQLite file alone keeps the embedded drivers', () => {
    const cfg = loadConfig({
      env: { UEDITOR_STORAGE_ROOT: '/mnt/uploads', UEDITOR_SQLITE_FILE: '/var/lib/ue/index.db' },
    })
    assert.deepEqual(cfg.storage, { driver: 'local', root: '/mnt/uploads' })
    assert.deepEqual(cfg.index, { driver: 'sqlite', file: '/var/lib/ue/index.db' })
  })

  test('a bucket alone selects S3 storage', () => {
    const cfg = loadConfig({ env: { UEDITOR_S3_BUCKET: 'uploads-bucket' } })
    assert.equal(cfg.storage.driver, 's3')
  })
})
