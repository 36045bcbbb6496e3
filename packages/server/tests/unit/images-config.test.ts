import assert from 'node:assert/strict'
import { loadConfig } from '../../src/config/load.js'
import { describe, test } from '../helpers/test.js'

describe('image and limit settings', () => {
  test('defaults keep images safe and limits generous', () => {
    const config = loadConfig({ env: {} })
    assert.deepEqual(
      {
        enabled: config.images.enabled,
        maxPixels: config.images.maxPixels,
        keepMetadata: config.images.keepMetadata,
        format: config.images.format,
        watermark: config.images.watermark,
      },
      {
        enabled: true,
        maxPixels: 50_000_000,
        keepMetadata: false,
        format: 'keep',
        watermark: undefined,
      },
    )
    assert.deepEqual(config.limits, {
      uploadsPerMinute: 120,
      concurrentUploads: 16,
      uploadQueue: 64,
      uploadQueueWaitMs: 30_000,
      minFreeBytes: 134_217_728,
      connectionsPerClient: 256,
      quotaBytes: 0,
      exemptUsers: [],
    })
  })

  test('environment variables set the image and limit keys, booleans included', () => {
    const config = loadConfig({
      cwd: '/srv/app',
      env: {
        UEDITOR_IMAGES_ENABLED: 'false',
        UEDITOR_IMAGES_KEEP_METADATA: '1',
        UEDITOR_IMAGES_MAX_PIXELS: '1000000',
        UEDITOR_IMAGES_MAX_FRAMES: '50',
        UEDITOR_IMAGES_FORMAT: 'webp',
        UEDITOR_IMAGES_QUALITY: '70',
        UEDITOR_IMAGES_WATERMARK: 'marks/logo.png',
        UEDITOR_LIMIT_UPLOADS_PER_MINUTE: '10',
        UEDITOR_LIMIT_CONCURRENT_UPLOADS: '2',
        UEDITOR_LIMIT_UPLOAD_QUEUE: '5',
        UEDITOR_LIMIT_UPLOAD_QUEUE_WAIT_MS: '1500',
        UEDITOR_LIMIT_MIN_FREE_BYTES: '0',
        UEDITOR_LIMIT_CONNECTIONS_PER_CLIENT: '7',
        UEDITOR_QUOTA_BYTES: '1048576',
        UEDITOR_LIMIT_EXEMPT_USERS: 'bench, load-test',
      },
    })
    assert.equal(config.images.enabled, false)
    assert.equal(config.images.keepMetadata, true)
    assert.equal(config.images.maxPixels, 1_000_000)
    assert.equal(config.images.maxFrames, 50)
    assert.equal(config.images.format, 'webp')
    assert.equal(config.images.quality, 70)
    assert.equal(config.images.watermark?.file, '/srv/app/marks/logo.png')
    assert.equal(config.images.watermark?.position, 'southeast')
    assert.deepEqual(config.limits, {
      uploadsPerMinute: 10,
      concurrentUploads: 2,
      uploadQueue: 5,
      uploadQueueWaitMs: 1_500,
      minFreeBytes: 0,
      connectionsPerClient: 7,
      quotaBytes: 1_048_576,
      exemptUsers: ['bench', 'load-test'],
    })
  })

  test('bad values are listed with the variable they came from', () => {
    assert.throws(
      () =>
        loadConfig({
          env: { UEDITOR_IMAGES_ENABLED: 'maybe', UEDITOR_IMAGES_FORMAT: 'bmp' },
          overrides: { images: { quality: 0, watermark: { file: 'm.png', opacity: 2 } } },
        }),
      (e: Error) => {
        assert.match(e.message, /images\.enabled \(from UEDITOR_IMAGES_ENABLED=maybe\)/)
        assert.match(e.message, /images\.format \(from UEDITOR_IMAGES_FORMAT=bmp\)/)
        assert.match(e.message, /images\.quality/)
        assert.match(e.message, /images\.watermark\.opacity/)
        return true
      },
    )
  })

  test('with WebP output both managers list .webp files', () => {
    const config = loadConfig({
      env: {},
      overrides: {
        images: { format: 'webp' },
        editor: { imageManagerAllowFiles: ['.png'], fileManagerAllowFiles: ['.pdf'] },
      },
    })
    assert.deepEqual(config.editor.imageManagerAllowFiles, ['.png', '.webp'])
    assert.deepEqual(config.editor.fileManagerAllowFiles, ['.pdf', '.webp'])
    const kept = loadConfig({
      env: {},
      overrides: { editor: { imageManagerAllowFiles: ['.png'] } },
    })
    assert.deepEqual(kept.editor.imageManagerAllowFiles, ['.png'])
  })
})
